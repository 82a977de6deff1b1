import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { literalTokens } from "./trigram-token.js";
import { asciiTrigramDocument, blockedTrigramDocument, foldText, trigramDocument } from "./trigrams.js";

describe("trigram tokens of a query", () => {
  // The index is written with trigrams.ts's tokens: a query's must be the same strings.
  it("names each trigram as the indexer does (property)", () => {
    const unit = fc.constantFrom("a", "Z", "0", "_", "\u212a", "\u017f", "é", "日", "~", "\x7f", " ", "😀");
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), fc.integer({ min: 2, max: 20 }), (units, max) => {
        const folded = foldText(units.join(""));
        const doc = new Set(trigramDocument(folded).split(" "));
        const tokens = literalTokens(folded, max);
        expect(tokens.length).toBeLessThanOrEqual(max);
        expect(tokens.every((t) => doc.has(t))).toBe(true);
        expect(literalTokens(folded, 64).every((t) => doc.has(t))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("covers the extremes of the ASCII key space", () => {
    for (const s of ["\0\0\0", "\x7f\x7f\x7f", "abc", "zzz"]) {
      const bytes = Buffer.from(s, "latin1");
      expect(literalTokens(s)).toEqual([trigramDocument(s)]);
      expect(literalTokens(s)).toEqual([asciiTrigramDocument(bytes)]);
      expect(literalTokens(s)).toEqual([blockedTrigramDocument(bytes, [0, 3]).doc]);
    }
  });
});
