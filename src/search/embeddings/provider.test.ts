import { describe, expect, it } from "vitest";
import { batches, cosine, dot, normalize, vectorFromBytes, vectorToBytes } from "./provider.js";

describe("vector helpers", () => {
  it("normalizes to unit length, leaving a zero vector zero", () => {
    expect(Array.from(normalize(Float32Array.of(3, 4)))).toEqual([0.6000000238418579, 0.800000011920929]);
    expect(Array.from(normalize(Float32Array.of(0, 0)))).toEqual([0, 0]);
  });

  it("dot is cosine for unit vectors; cosine handles any length and zero", () => {
    const a = normalize(Float32Array.of(1, 2, 3));
    const b = normalize(Float32Array.of(3, 2, 1));
    expect(dot(a, b)).toBeCloseTo(cosine(Float32Array.of(1, 2, 3), Float32Array.of(30, 20, 10)), 6);
    expect(cosine(Float32Array.of(0, 0), Float32Array.of(1, 0))).toBe(0);
    expect(() => dot(Float32Array.of(1), Float32Array.of(1, 2))).toThrow(RangeError);
  });

  it("round-trips vectors through bytes, including from an unaligned slice", () => {
    const v = Float32Array.of(0.25, -1.5, 3);
    const bytes = vectorToBytes(v);
    expect(bytes.byteLength).toBe(12);
    const padded = new Uint8Array(13);
    padded.set(bytes, 1);
    expect(Array.from(vectorFromBytes(padded.subarray(1)))).toEqual([0.25, -1.5, 3]);
  });

  it("batches by count and by weight, giving an overweight item a batch of its own", () => {
    const items = [1, 2, 3, 4, 5, 6, 7];
    expect(batches(items, 3)).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(batches([2, 2, 9, 1, 1, 1], 10, 4, (x) => x)).toEqual([[2, 2], [9], [1, 1, 1]]);
    expect(batches([], 3)).toEqual([]);
  });
});
