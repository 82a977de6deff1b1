import { randomBytes } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decode, decodeSpans, encode, reencoded } from "./blob-codec.js";

// Text that compresses unevenly: a repetitive start, then varied lines.
const text = Buffer.from(
  "x".repeat(300_000) + Array.from({ length: 60_000 }, (_, i) => `line ${i} ${(i * 2654435761) % 1000003}\n`).join(""),
);
const SEGMENT = 16 * 1024;
const spans = [
  { from: 0, to: 1 },
  { from: 5, to: 5 },
  { from: SEGMENT - 1, to: SEGMENT + 1 },
  { from: 299_990, to: 300_010 },
  { from: 123_456, to: 123_456 + 3 * SEGMENT + 7 },
  { from: text.byteLength - 10, to: text.byteLength },
  { from: 0, to: text.byteLength },
];
const expected = spans.map((s) => text.subarray(s.from, s.to));

describe("blob codec", () => {
  it("inflates a small value into a buffer of about its size, not zlib's 16 KiB chunk", () => {
    // An indexing batch holds thousands of these: each kept a 16 KiB chunk alive for 2 KiB of text.
    const small = Buffer.from("a line of text that compresses\n".repeat(64));
    const got = decode(encode(small), small.byteLength, "test");
    expect(got.equals(small)).toBe(true);
    expect(got.buffer.byteLength).toBeLessThan(16 * 1024);
  });

  it("stores a large value seekable: whole and span reads give back the same bytes", () => {
    const stored = encode(text);
    expect(stored[0]).toBe(0xfe);
    expect(stored.byteLength).toBeLessThan(text.byteLength * 0.9);
    expect(decode(stored, text.byteLength, "test").equals(text)).toBe(true);
    const got = decodeSpans(stored, text.byteLength, spans, "test");
    for (const [i, g] of got.entries()) expect(g.equals(expected[i] as Buffer)).toBe(true);
  });

  it("reads values written before seekable values existed (one deflate stream), whole and in spans", () => {
    const old = deflateRawSync(text, { level: 1 });
    expect(decode(old, text.byteLength, "test").equals(text)).toBe(true);
    const got = decodeSpans(old, text.byteLength, spans, "test");
    for (const [i, g] of got.entries()) expect(g.equals(expected[i] as Buffer)).toBe(true);
  });

  it("keeps small and incompressible values as they are, and reads them in spans", () => {
    const small = Buffer.from("hello world, ".repeat(10));
    const smallStored = encode(small);
    expect(smallStored[0]).not.toBe(0xfe);
    expect(decode(smallStored, small.byteLength, "test").equals(small)).toBe(true);
    const noise = randomBytes(200_000);
    expect(encode(noise)).toBe(noise);
    expect(
      decodeSpans(noise, noise.byteLength, [{ from: 10, to: 20 }], "test")[0]?.equals(noise.subarray(10, 20)),
    ).toBe(true);
  });

  it("a corrupt value fails as IO_ERROR, whole or in spans, never as other bytes", () => {
    const stored = encode(text);
    const torn = stored.subarray(0, stored.byteLength - 100);
    expect(() => decode(torn, text.byteLength, "test")).toThrow(expect.objectContaining({ code: "IO_ERROR" }));
    const badTable = Buffer.from(stored);
    badTable.writeUInt32LE(3, 2);
    expect(() => decodeSpans(badTable, text.byteLength, [{ from: 0, to: 10 }], "test")).toThrow(
      expect.objectContaining({ code: "IO_ERROR" }),
    );
    const badBytes = Buffer.from(stored);
    const headerBytes = 6 + 4 * Math.ceil(text.byteLength / SEGMENT);
    badBytes.fill(0xff, headerBytes, headerBytes + 300);
    expect(() => decodeSpans(badBytes, text.byteLength, [{ from: 0, to: 10 }], "test")).toThrow(
      expect.objectContaining({ code: "IO_ERROR" }),
    );
    const old = Buffer.from(deflateRawSync(text, { level: 1 }));
    old.fill(0xff, 0, 64);
    expect(() => decodeSpans(old, text.byteLength, [{ from: 0, to: 10 }], "test")).toThrow(
      expect.objectContaining({ code: "IO_ERROR" }),
    );
  });

  it("re-encodes a one-stream or raw text value as encode stores it today, seekable", () => {
    for (const old of [deflateRawSync(text, { level: 1 }), text]) {
      const fresh = reencoded(old, text.byteLength, "test");
      expect(fresh?.equals(encode(text))).toBe(true);
      expect(fresh?.[0]).toBe(0xfe);
      expect(decode(fresh as Buffer, text.byteLength, "test").equals(text)).toBe(true);
    }
  });

  it("leaves alone values encode would store the same way: current, small, binary, incompressible", () => {
    const small = Buffer.from("hello world, ".repeat(100));
    const binary = Buffer.concat([Buffer.from([0]), text]);
    const noise = randomBytes(200_000);
    const unchanged: Array<[Buffer, number]> = [
      [encode(text), text.byteLength],
      [deflateRawSync(small, { level: 1 }), small.byteLength],
      [small, small.byteLength],
      [deflateRawSync(binary, { level: 1 }), binary.byteLength],
      [binary, binary.byteLength],
      [noise, noise.byteLength],
    ];
    for (const [stored, size] of unchanged) expect(reencoded(stored, size, "test")).toBeNull();
  });

  it("does not inflate a binary one-stream value whole to see it cannot change", () => {
    const binary = Buffer.concat([Buffer.from([0]), text]);
    const old = deflateRawSync(binary, { level: 1 });
    // Only the start is intact: a whole inflate would fail as IO_ERROR.
    const torn = Buffer.concat([old.subarray(0, old.byteLength / 2), Buffer.alloc(old.byteLength / 2, 0xff)]);
    expect(reencoded(torn, binary.byteLength, "test")).toBeNull();
  });

  it("reports a corrupt old value as IO_ERROR instead of re-encoding it", () => {
    const old = Buffer.from(deflateRawSync(text, { level: 1 }));
    old.fill(0xff, old.byteLength - 200);
    expect(() => reencoded(old, text.byteLength, "test")).toThrow(expect.objectContaining({ code: "IO_ERROR" }));
  });
});
