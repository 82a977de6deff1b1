import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { literalKeys, POSTING_KEYS } from "./trigram-token.js";
import { asciiTrigramKeys, blockedTrigramKeys, foldText, trigramKeysOf } from "./trigrams.js";

describe("posting keys of a query", () => {
  // The index is written with trigrams.ts's keys: a query's must be the same numbers.
  it("names each trigram as the indexer does (property)", () => {
    const unit = fc.constantFrom("a", "Z", "0", "_", "\u212a", "\u017f", "é", "日", "~", "\x7f", " ", "😀");
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), fc.integer({ min: 2, max: 20 }), (units, max) => {
        const folded = foldText(units.join(""));
        const doc = new Set(trigramKeysOf(folded));
        const keys = literalKeys(folded, max);
        expect(keys.length).toBeLessThanOrEqual(max);
        expect(keys.every((k) => doc.has(k) && k < POSTING_KEYS)).toBe(true);
        expect(literalKeys(folded, 64).every((k) => doc.has(k))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("covers the extremes of the ASCII key space", () => {
    for (const s of ["\0\0\0", "\x7f\x7f\x7f", "abc", "zzz"]) {
      const bytes = Buffer.from(s, "latin1");
      expect(literalKeys(s)).toEqual([...trigramKeysOf(s)]);
      expect(literalKeys(s)).toEqual([...asciiTrigramKeys(bytes)]);
      expect(literalKeys(s)).toEqual([...blockedTrigramKeys(bytes, [0, 3]).keys]);
    }
  });
});
