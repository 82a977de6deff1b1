import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BlockFilters, bandsOf, type ProbeTree, queryProbes } from "./block-filters.js";
import type { LiteralQuery } from "./text-index.js";
import { BLOOM_BYTES, bloomHas, trigramKeys } from "./trigrams.js";

/** The reference: each block's filter asked key by key. */
function reference(rows: Uint8Array, blocks: number, q: LiteralQuery): number[] {
  const holds = (b: number, p: LiteralQuery): boolean =>
    p.op === "all"
      ? true
      : p.op === "lit"
        ? trigramKeys(p.folded).every((k) => bloomHas(rows, b, k))
        : p.op === "and"
          ? p.of.every((x) => holds(b, x))
          : p.of.some((x) => holds(b, x));
  return Array.from({ length: blocks }, (_, b) => b).filter((b) => holds(b, q));
}

const literal = fc.string({ unit: fc.constantFrom("a", "b", "c", "d"), minLength: 3, maxLength: 6 });
const query: fc.Arbitrary<LiteralQuery> = fc.letrec((tie) => ({
  q: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal.map((folded): LiteralQuery => ({ op: "lit", folded })),
    fc.constant<LiteralQuery>({ op: "all" }),
    fc.record({
      op: fc.constantFrom("and" as const, "or" as const),
      of: fc.array(tie("q"), { minLength: 1, maxLength: 3 }),
    }),
  ) as fc.Arbitrary<LiteralQuery>,
})).q;

describe("BlockFilters", () => {
  it("names the same blocks before and after its filters are transposed, as a key-by-key test does (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 150 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(query, { minLength: 1, maxLength: 4 }),
        (blocks, seed, density, queries) => {
          // Dense filters, so that many blocks pass and the bit sets have every shape.
          const rows = new Uint8Array(blocks * BLOOM_BYTES);
          let s = seed;
          for (let i = 0; i < rows.length; i++) {
            s = (Math.imul(s, 1103515245) + 12345) >>> 0;
            if ((s >>> 8) / 2 ** 24 < density) rows[i] = s >>> 24;
          }
          const filters = new BlockFilters(rows.slice(), blocks);
          // Stored in bands: each search loads the bands it needs first, as the index does.
          const bands = bandsOf(rows, blocks);
          const banded = BlockFilters.banded(blocks);
          for (let round = 0; round < 3; round++) {
            for (const q of queries) {
              const probes: ProbeTree = queryProbes(q);
              expect(filters.matching(probes)).toEqual(reference(rows, blocks, q));
              for (const j of banded.bandsToLoad(probes)) banded.addBand(j, (bands[j] as Uint32Array).slice());
              expect(banded.matching(probes)).toEqual(reference(rows, blocks, q));
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
