import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSchemaError, issuesText } from "./schema-issues.js";

describe("issuesText", () => {
  const schema = z.strictObject({ path: z.string(), opts: z.object({ depth: z.number() }) });

  it("says where and what for each issue, joined by semicolons", () => {
    const r = schema.safeParse({ path: 1, opts: { depth: "x" } });
    expect(r.success).toBe(false);
    expect(issuesText(r.error?.issues ?? [])).toBe(
      "path: Invalid input: expected string, received number; opts.depth: Invalid input: expected number, received string",
    );
  });

  it("renames an issue by its first segment, and leaves one about the whole value bare", () => {
    expect(issuesText([{ path: ["opts", "depth"], message: "too deep" }], { opts: "--opts" })).toBe("--opts: too deep");
    expect(issuesText([{ path: [], message: "expected an object" }])).toBe("expected an object");
  });

  it("tells a zod error by its shape", () => {
    expect(isSchemaError(schema.safeParse(null).error)).toBe(true);
    expect(isSchemaError(new Error("no"))).toBe(false);
  });
});
