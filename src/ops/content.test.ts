import { describe, expect, it } from "vitest";
import { isAfsError } from "../core/errors.js";
import { contentBytes } from "./content.js";

const refused = (content: string): boolean => {
  try {
    contentBytes(content, "base64", "/f");
    return false;
  } catch (e) {
    return isAfsError(e) && e.code === "INVALID_ARGUMENT";
  }
};

describe("contentBytes", () => {
  it("decodes base64 of every padding, ignoring whitespace", () => {
    for (const bytes of [[], [1], [1, 2], [1, 2, 3], [0xff, 0, 0x7f, 0x80]]) {
      const b64 = Buffer.from(bytes).toString("base64");
      expect(contentBytes(b64, "base64", "/f")).toEqual(Buffer.from(bytes));
      expect(contentBytes(`${b64.slice(0, 2)}\n ${b64.slice(2)}\r\n`, "base64", "/f")).toEqual(Buffer.from(bytes));
    }
  });

  it("refuses what is not base64", () => {
    for (const bad of ["abc", "ab=c", "a===", "=abc", "ab*d", "abcd=", "abc=abcd", "YQ=a"])
      expect(refused(bad)).toBe(true);
  });

  it("takes tens of megabytes (a file piped to afs fs write)", () => {
    const bytes = Buffer.alloc(30 * 1024 * 1024 + 1, 7);
    expect(contentBytes(bytes.toString("base64"), "base64", "/f").equals(bytes)).toBe(true);
  });
});
