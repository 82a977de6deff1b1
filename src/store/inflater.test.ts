// The reused inflater: the bytes inflateRawSync gives, value after value; null (never wrong bytes)
// for a value it cannot inflate exactly, and still good for the next one.
import { randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decode, decodeReusing, encode } from "./blob-codec.js";
import { Inflater } from "./inflater.js";

const text = (i: number, n: number) => Buffer.from(`line ${i} ${"abc ".repeat(i % 50)}\n`.repeat(n));

describe("Inflater", () => {
  it("inflates a run of values as inflateRawSync does, in a buffer it reuses", () => {
    const inflater = new Inflater();
    for (let i = 0; i < 200; i++) {
      const data = text(i, 1 + (i % 300));
      const got = inflater.inflate(deflateRawSync(data, { level: 1 }), data.byteLength);
      expect(got?.equals(data)).toBe(true);
    }
  });

  it("answers null for a corrupt, truncated or mis-sized value, and inflates the next one", () => {
    const inflater = new Inflater();
    const data = text(7, 100);
    const packed = deflateRawSync(data, { level: 1 });
    expect(inflater.inflate(randomBytes(200), data.byteLength)).toBeNull();
    expect(inflater.inflate(packed.subarray(0, packed.byteLength >> 1), data.byteLength)).toBeNull();
    expect(inflater.inflate(packed, data.byteLength - 1)).toBeNull();
    expect(inflater.inflate(packed, data.byteLength + 1)).toBeNull();
    expect(inflater.inflate(Buffer.concat([packed, Buffer.from("junk")]), data.byteLength)).toBeNull();
    expect(inflater.inflate(packed, data.byteLength)?.equals(data)).toBe(true);
  });

  it("decodeReusing reads raw, one-stream and seekable values as decode does, and reports corruption", () => {
    const inflater = new Inflater();
    const values = [Buffer.from("short"), text(3, 50), text(9, 5000), randomBytes(3000)];
    for (const data of values) {
      const stored = encode(data);
      expect(decodeReusing(stored, data.byteLength, "v", inflater).equals(data)).toBe(true);
      expect(decode(stored, data.byteLength, "v").equals(data)).toBe(true);
    }
    const stored = encode(text(3, 50));
    expect(() => decodeReusing(stored.subarray(0, 20), 50 * text(3, 1).byteLength, "v", inflater)).toThrow(/corrupt/);
  });
});
