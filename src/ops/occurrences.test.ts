import { describe, expect, it } from "vitest";
import { closestHint, findAll, selectOccurrences, similarity } from "./occurrences.js";

describe("findAll", () => {
  it("finds non-overlapping occurrences with their starting lines", () => {
    expect(findAll("aaa\nxaa\n\naa", "aa")).toEqual([
      { index: 0, line: 1 },
      { index: 5, line: 2 },
      { index: 9, line: 4 },
    ]);
    expect(findAll("x\ny", "\ny")).toEqual([{ index: 1, line: 1 }]);
  });
});

describe("selectOccurrences", () => {
  const body = "a\nb\na\nb\na\n";
  it("lists the lines of an ambiguous match", () => {
    expect(() => selectOccurrences("/f", body, "a", {})).toThrow(/3 times \(lines 1, 3, 5\)/);
  });
  it("narrows by context on both sides", () => {
    expect(selectOccurrences("/f", body, "a", { context_before: "b\n", context_after: "\nb" })).toEqual([
      { index: 4, line: 3 },
    ]);
  });
  it("says which constraint failed", () => {
    expect(() => selectOccurrences("/f", body, "a", { start_line: 2 })).toThrow(/none starts on line 2/);
  });
});

describe("hints", () => {
  it("scores similar lines high and different ones low", () => {
    expect(similarity("return x", "return y")).toBeGreaterThan(0.7);
    expect(similarity("return x", "import os")).toBeLessThan(0.3);
  });
  it("stays quiet when nothing is close", () => {
    expect(closestHint("alpha\nbeta\n", "zzzz qqqq")).toBe("");
  });
});
