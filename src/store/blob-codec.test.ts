import { describe, expect, it } from "vitest";
import { decode, decodePrefix, encode } from "./blob-codec.js";

describe("blob codec", () => {
  // Text that compresses unevenly: a repetitive start, then varied lines.
  const text = Buffer.from(
    "x".repeat(300_000) +
      Array.from({ length: 60_000 }, (_, i) => `line ${i} ${(i * 2654435761) % 1000003}\n`).join(""),
  );
  const stored = encode(text);

  it("a prefix read gives at least the bytes asked for, equal to the whole decode's", () => {
    expect(stored.byteLength).toBeLessThan(text.byteLength);
    for (const need of [1, 1000, 299_999, 300_001, 500_000, Math.floor(text.byteLength * 0.7), text.byteLength]) {
      const raw = decodePrefix(stored, text.byteLength, need, "test");
      expect(raw.byteLength).toBeGreaterThanOrEqual(need);
      expect(raw.equals(text.subarray(0, raw.byteLength))).toBe(true);
    }
    expect(decode(stored, text.byteLength, "test").equals(text)).toBe(true);
  });

  it("a prefix read of a corrupt value still fails as IO_ERROR when it cannot inflate", () => {
    const bad = Buffer.from(stored);
    bad.fill(0xff, 0, 64);
    expect(() => decodePrefix(bad, text.byteLength, 10, "test")).toThrow(expect.objectContaining({ code: "IO_ERROR" }));
  });
});
