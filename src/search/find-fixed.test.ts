import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fixedFinder } from "./find-fixed.js";

describe("fixedFinder", () => {
  it("finds exactly what indexOf finds, from any offset (property)", () => {
    // Texts built from pieces of the needle make near misses, overlaps and repeats common.
    const unit = fc.constantFrom("a", "b", "H", "~", "\n", " ", "é", "\u2028");
    const needle = fc.string({ unit, minLength: 0, maxLength: 12 });
    const text = (n: string) =>
      fc
        .array(
          fc.oneof(
            fc.constant(n),
            fc.nat(n.length).map((k) => n.slice(k)),
            fc.nat(n.length).map((k) => n.slice(0, k)),
            unit,
          ),
          { maxLength: 40 },
        )
        .map((parts) => parts.join(""));
    const cases = needle.chain((n) => fc.tuple(fc.constant(n), text(n), fc.integer({ min: -15, max: 400 })));
    fc.assert(
      fc.property(cases, ([n, t, from]) => {
        const find = fixedFinder(n);
        expect(find(t, from)).toBe(t.indexOf(n, from));
        // Every occurrence in turn, as grep walks them.
        for (let i = t.indexOf(n), j = find(t, 0); i !== -1 || j !== -1; i = t.indexOf(n, i + 1), j = find(t, j + 1)) {
          expect(j).toBe(i);
          if (n === "") break;
        }
      }),
      { numRuns: 5000 },
    );
  });

  it("finds needles longer than its anchor, at the ends of the text and overlapping", () => {
    const needle = "createHash";
    const t = `createHash x createHashcreateHash createHas ${needle}`;
    const find = fixedFinder(needle);
    const got: number[] = [];
    for (let i = find(t, 0); i !== -1; i = find(t, i + 1)) got.push(i);
    const want: number[] = [];
    for (let i = t.indexOf(needle); i !== -1; i = t.indexOf(needle, i + 1)) want.push(i);
    expect(got).toEqual(want);
    expect(fixedFinder("aaaaaaaaH~")("aaaaaaaaaaaaaaaaH~", 0)).toBe(8);
    // Anchor hits one apart, the first a near miss.
    expect(fixedFinder("HHHHHHHa")("HHHHHHHHa", 0)).toBe(1);
  });
});
