import { describe, expect, it } from "vitest";
import { AfsError } from "../core/errors.js";
import { bindSession, leavesPin, workspaceForCall } from "./binding.js";

// Just the two engine methods binding reads: an afs home with workspace "demo".
const home = (current: string | null) => ({
  workspaces: {
    current: async () => current,
    get: async (name: string) => {
      if (name !== "demo") throw new AfsError("NOT_FOUND", `workspace ${name} does not exist`);
      return {} as never;
    },
  },
});

describe("bindSession", () => {
  it("takes the flag, then $AFS_WORKSPACE, then the current workspace, when it may fall back", async () => {
    const bind = { profile: "workspace-rw", fallback: true } as const;
    expect(await bindSession(home(null), { ...bind, requested: "demo", env: { AFS_WORKSPACE: "x" } })).toBe("demo");
    expect(await bindSession(home("x"), { ...bind, env: { AFS_WORKSPACE: "demo" } })).toBe("demo");
    expect(await bindSession(home("demo"), { ...bind, env: {} })).toBe("demo");
  });

  it("requires a workspace for a bound profile, not for an admin one or a per-call face", async () => {
    await expect(bindSession(home(null), { profile: "workspace-ro", fallback: true, env: {} })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("afs ws use NAME"),
    });
    expect(await bindSession(home(null), { profile: "admin-ro", fallback: true, env: {} })).toBeNull();
    expect(await bindSession(home("demo"), { profile: "workspace-rw", fallback: false, env: {} })).toBeNull();
  });

  it("refuses a workspace that does not exist, saying how to create it", async () => {
    await expect(
      bindSession(home(null), { profile: "admin-rw", requested: "ghost", fallback: false }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("afs ws create ghost"),
    });
  });
});

describe("workspaceForCall", () => {
  it("prefers the argument, then the session's, then the current one", async () => {
    expect(await workspaceForCall(home("c"), { workspace: "s", pinned: false }, "a")).toBe("a");
    expect(await workspaceForCall(home("c"), { workspace: "s", pinned: false }, undefined)).toBe("s");
    expect(await workspaceForCall(home("c"), { workspace: null, pinned: false }, undefined)).toBe("c");
  });

  it("keeps a pinned session on its workspace, and adds a face's hint when none is chosen", async () => {
    const pinned = { workspace: "demo", pinned: true };
    expect(leavesPin(pinned, "other")).toBe(true);
    expect(leavesPin(pinned, "demo") || leavesPin(pinned, undefined)).toBe(false);
    await expect(workspaceForCall(home(null), pinned, "other")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    const none = { workspace: null, pinned: false };
    await expect(workspaceForCall(home(null), none, undefined, "see a list")).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: "no workspace chosen for this session; pass workspace (see a list)",
    });
  });
});
