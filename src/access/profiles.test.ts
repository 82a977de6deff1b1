import { describe, expect, it } from "vitest";
import { checkAllowed } from "./profiles.js";

describe("checkAllowed", () => {
  it("passes an allowed tool and refuses another, naming the profiles that grant it", () => {
    expect(() => checkAllowed("workspace-rw", { name: "file_write", family: "file-write" })).not.toThrow();
    expect(() => checkAllowed("workspace-rw", { name: "checkpoint_create", family: "checkpoint-write" })).toThrow(
      expect.objectContaining({
        code: "PERMISSION_DENIED",
        message:
          "checkpoint_create is not available with profile workspace-rw; it needs profile workspace-rw-checkpoint or admin-rw",
        details: { tool: "checkpoint_create", profile: "workspace-rw" },
      }),
    );
    // A single tool granted beyond the families (admin-ro may list checkpoints).
    expect(() => checkAllowed("admin-ro", { name: "checkpoint_list", family: "checkpoint-read" })).not.toThrow();
  });
});
