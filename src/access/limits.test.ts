import { describe, expect, it } from "vitest";
import { AfsError } from "../core/errors.js";
import { capResults, checkTextFile, checkWholeRead, checkWriteArgs, DEFAULT_LIMITS, resolveLimits } from "./limits.js";

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

  it("messages name no protocol's tools; a face adds its own hint", () => {
    const limits = resolveLimits({ maxReadBytes: 4, maxWriteBytes: 4 }, {});
    const message = (fn: () => void): string => {
      try {
        fn();
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    };
    const whole = message(() => checkWholeRead(limits, "/a", 5));
    const write = message(() => checkWriteArgs(limits, { content: "01234" }));
    expect(whole).toBe("/a is 5 bytes, more than the 4 bytes returned whole; read a range of lines instead");
    expect(write).toContain("split it into smaller writes");
    expect(`${whole} ${write}`).not.toMatch(/file_|fs\//);
    expect(message(() => checkWholeRead(limits, "/a", 5, "use read_lines"))).toMatch(/instead \(use read_lines\)$/);
  });

  it("whole text files: 8 MiB by default, AFS_MAX_TEXT_FILE_BYTES overrides, the message names both", () => {
    expect(DEFAULT_LIMITS.maxTextFileBytes).toBe(8 * 1024 * 1024);
    const fromEnv = resolveLimits({}, { AFS_MAX_TEXT_FILE_BYTES: "2048" });
    expect(fromEnv.maxTextFileBytes).toBe(2048);
    expect(code(() => checkTextFile(fromEnv, "/big.log", 2048))).toBeUndefined();
    try {
      checkTextFile(fromEnv, "/big.log", 2049);
      expect.unreachable("a file over the cap must be refused");
    } catch (e) {
      expect(e).toBeInstanceOf(AfsError);
      const err = e as AfsError;
      expect(err.code).toBe("QUOTA_EXCEEDED");
      expect(err.message).toContain("/big.log is 2049 bytes");
      expect(err.message).toContain("2 KiB");
      expect(err.message).toContain("AFS_MAX_TEXT_FILE_BYTES");
      expect(err.details).toEqual({ path: "/big.log", size: 2049, limit: 2048 });
    }
    expect(code(() => checkTextFile(DEFAULT_LIMITS, "/a", 8 * 1024 * 1024 + 1))).toBe("QUOTA_EXCEEDED");
    expect(code(() => resolveLimits({}, { AFS_MAX_TEXT_FILE_BYTES: "0" }))).toBe("INVALID_ARGUMENT");
  });
});
