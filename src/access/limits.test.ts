import { describe, expect, it } from "vitest";
import { AfsError } from "../core/errors.js";
import { capResults, checkWholeRead, checkWriteArgs, DEFAULT_LIMITS, resolveLimits } from "./limits.js";

const code = (fn: () => void): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (e) {
    return e instanceof AfsError ? e.code : "not an AfsError";
  }
};

describe("limits", () => {
  it("defaults, then the environment, then options", () => {
    expect(resolveLimits({}, {})).toEqual(DEFAULT_LIMITS);
    expect(resolveLimits({}, { AFS_MAX_RESULTS: "7" }).maxResults).toBe(7);
    expect(resolveLimits({ maxResults: 9 }, { AFS_MAX_RESULTS: "7" }).maxResults).toBe(9);
    expect(resolveLimits({}, { AFS_MAX_READ_BYTES: "" }).maxReadBytes).toBe(DEFAULT_LIMITS.maxReadBytes);
  });

  it("refuses malformed values instead of ignoring them", () => {
    for (const bad of ["0", "-1", "1.5", "ten", "1e400"]) {
      expect(code(() => resolveLimits({}, { AFS_MAX_WRITE_BYTES: bad }))).toBe("INVALID_ARGUMENT");
    }
  });

  it("counts content and new at any depth, and nothing else", () => {
    const limits = resolveLimits({ maxWriteBytes: 10 }, {});
    expect(code(() => checkWriteArgs(limits, { path: "x".repeat(50), content: "0123456789" }))).toBeUndefined();
    expect(code(() => checkWriteArgs(limits, { content: "01234567890" }))).toBe("QUOTA_EXCEEDED");
    expect(code(() => checkWriteArgs(limits, { content: "é".repeat(6) }))).toBe("QUOTA_EXCEEDED");
    const patches = [
      { op: "insert", new: "012345" },
      { op: "replace", old: "x".repeat(99), new: "012345" },
    ];
    expect(code(() => checkWriteArgs(limits, { patches }))).toBe("QUOTA_EXCEEDED");
    expect(code(() => checkWriteArgs(limits, undefined))).toBeUndefined();
  });

  it("whole reads and result lists", () => {
    const limits = resolveLimits({ maxReadBytes: 4, maxResults: 2 }, {});
    expect(code(() => checkWholeRead(limits, "/a", 4))).toBeUndefined();
    expect(code(() => checkWholeRead(limits, "/a", 5))).toBe("QUOTA_EXCEEDED");
    expect(capResults(limits, [1, 2])).toEqual({ items: [1, 2], truncated: false });
    expect(capResults(limits, [1, 2, 3])).toEqual({ items: [1, 2], truncated: true });
  });
});
