import fc from "fast-check";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { type Required, requiredLiterals } from "./required-literals.js";
import { foldText } from "./trigrams.js";

/** The query as plain data: literals by their folded keys. */
function keys(r: Required): unknown {
  switch (r.op) {
    case "all":
      return "*";
    case "lit":
      return r.lit.key;
    case "and":
      return { and: r.of.map(keys) };
    case "or":
      return { or: r.of.map(keys) };
  }
}

/** Whether a line satisfies the query, both ways the index and the scanner read a literal. */
function holds(r: Required, line: string): boolean {
  switch (r.op) {
    case "all":
      return true;
    case "lit":
      return foldText(line).includes(r.lit.key) && new RegExp(r.lit.src).test(line);
    case "and":
      return r.of.every((p) => holds(p, line));
    case "or":
      return r.of.some((p) => holds(p, line));
  }
}

describe("requiredLiterals", () => {
  const lits = (pattern: string, fold = false) => keys(requiredLiterals(pattern, fold).required);

  it("finds the literals every match needs", () => {
    expect(lits("hello")).toBe("hello");
    expect(lits("\\b[A-Z][a-z]+ing\\b")).toBe("ing");
    expect(lits("foo\\w+bar")).toEqual({ and: ["foo", "bar"] });
    expect(lits("(?:get|set)Value")).toEqual({ or: ["getvalue", "setvalue"] });
    expect(lits("colou?r")).toEqual({ or: ["colour", "color"] });
    expect(lits("(abc)+x")).toBe("abc");
    expect(lits("a\\.b\\.c")).toBe("a.b.c");
    expect(lits("\\Qa.*b\\E")).toBe("a.*b");
    expect(lits("[Tt]odo")).toEqual({ or: ["todo", "todo"] });
  });

  it("finds shorter literals when asked (for scanning, not for the index)", () => {
    expect(keys(requiredLiterals("ab", false, 1).required)).toBe("ab");
    expect(keys(requiredLiterals("[xy]z", false, 1).required)).toEqual({ or: ["xz", "yz"] });
    expect(keys(requiredLiterals("\\d+\\.\\d+", false, 1).required)).toBe(".");
  });

  it("requires nothing when a match can do without any literal of three or more", () => {
    for (const p of [".*", "ab", "a|bcd", "(abc)?", "x*", "[a-z]+ing?", "\\d{3}", "(?:abc)*def|gh"]) {
      expect(lits(p)).toBe("*");
    }
  });

  it("folds ASCII case, and gives up on letters whose case RE2 folds otherwise", () => {
    expect(lits("HeLLo", true)).toBe("hello");
    expect(lits("(?i)abc")).toBe("abc");
    expect(lits("abc(?i:DEF)")).toBe("abcdef");
    // "é" has a case partner: under (?i) it is not indexed, so the literal splits around it.
    expect(lits("caféteria", true)).toEqual({ and: ["caf", "teria"] });
    expect(lits("café", false)).toBe("café");
  });

  it("notes anchors, and gives up on syntax it does not read", () => {
    expect(requiredLiterals("^abc", false).anchored).toBe(true);
    expect(requiredLiterals("abc\\z", false).anchored).toBe(true);
    expect(requiredLiterals("\\babc\\b", false).anchored).toBe(false);
    expect(requiredLiterals("abc\\1def", false)).toEqual({ required: { op: "all" }, anchored: true });
  });

  // Soundness: whenever RE2 finds a match in a line, the line holds every required literal. Each
  // random pattern comes with a string it matches, so most lines below do match.
  it("never requires a literal that a matching line lacks (property)", () => {
    const stats = { matched: 0, withLiterals: 0 };
    fc.assert(
      fc.property(patternWithSample, fc.boolean(), noise, noise, noise, (p, fold, before, after, other) => {
        let re: RE2JS;
        try {
          re = RE2JS.compile(p.src, fold ? RE2JS.CASE_INSENSITIVE : 0);
        } catch {
          return true; // not valid RE2: grep refuses it before asking for literals
        }
        // What the index asks for (trigrams), and what the scanner looks for (any length).
        const { required } = requiredLiterals(p.src, fold);
        const scan = requiredLiterals(p.src, fold, 1).required;
        for (const line of [before + p.sample + after, p.sample, other]) {
          if (!re.test(line)) continue;
          stats.matched++;
          if (required.op !== "all") stats.withLiterals++;
          if (!holds(required, line) || !holds(scan, line)) return false;
        }
        return true;
      }),
      { numRuns: 4000 },
    );
    // The property is only worth something if many matching lines had literals to check.
    expect(stats.withLiterals).toBeGreaterThan(1000);
  });
});

// --- random patterns with a string each matches ---------------------------------------------

interface Sampled {
  src: string;
  sample: string;
}

const LEAVES: readonly [string, string][] = [
  ["abc", "abc"],
  ["ing", "ing"],
  ["a", "a"],
  ["b", "b"],
  ["K", "K"],
  ["k", "k"],
  ["s", "s"],
  ["S", "S"],
  ["\u212a", "\u212a"],
  ["\u017f", "\u017f"],
  ["é", "é"],
  ["É", "É"],
  ["ß", "ß"],
  ["Σ", "Σ"],
  ["σ", "σ"],
  ["_", "_"],
  [" ", " "],
  ["-", "-"],
  ["\\.", "."],
  [".", "x"],
  [".", "é"],
  ["\\w", "q"],
  ["\\d", "7"],
  ["\\s", " "],
  ["\\b", ""],
  ["\\B", ""],
  ["^", ""],
  ["$", ""],
  ["[abc]", "b"],
  ["[a-c]", "c"],
  ["[^a]", "z"],
  ["[Kk]", "K"],
  ["[[:alpha:]]", "m"],
  ["\\pL", "é"],
  ["\\x41", "A"],
  ["\\x{e9}", "é"],
  ["\\Qa.b\\E", "a.b"],
  ["\\t", "\t"],
  ["[\\]a]", "]"],
  ["[a-]", "-"],
  ["(?i)", ""],
  ["(?-i)", ""],
  ["{", "{"],
  ["a{,2}", "a{,2}"],
];

// Case partners RE2 folds together (simple case folding), to vary a sample under (?i).
const PARTNERS: Record<string, string[]> = {
  a: ["A"],
  b: ["B"],
  c: ["C"],
  g: ["G"],
  i: ["I"],
  n: ["N"],
  q: ["Q"],
  m: ["M"],
  x: ["X"],
  z: ["Z"],
  k: ["K", "\u212a"],
  K: ["k", "\u212a"],
  "\u212a": ["k", "K"],
  s: ["S", "\u017f"],
  S: ["s", "\u017f"],
  "\u017f": ["s", "S"],
  é: ["É"],
  É: ["é"],
  σ: ["Σ", "ς"],
  Σ: ["σ", "ς"],
  ß: ["ẞ"],
};

function vary(sample: string, seed: number): string {
  return [...sample]
    .map((ch, i) => {
      const partners = PARTNERS[ch];
      const pick = (seed >>> (i % 28)) & 3;
      return partners && pick > 0 ? (partners[(pick - 1) % partners.length] as string) : ch;
    })
    .join("");
}

const REPEATS: readonly [string, number, number][] = [
  ["*", 0, 2],
  ["+", 1, 2],
  ["?", 0, 1],
  ["{2}", 2, 2],
  ["{1,3}", 1, 3],
  ["{0,}", 0, 2],
  ["*?", 0, 2],
  ["+?", 1, 2],
];

const patternWithSample: fc.Arbitrary<Sampled> = fc.letrec<{ p: Sampled }>((tie) => ({
  p: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom(...LEAVES.filter((l) => l.length === 2)).map(([src, sample]) => ({ src, sample })),
    fc.tuple(tie("p"), tie("p")).map(([x, y]) => ({ src: x.src + y.src, sample: x.sample + y.sample })),
    fc.tuple(tie("p"), tie("p"), tie("p")).map(([x, y, z]) => ({
      src: x.src + y.src + z.src,
      sample: x.sample + y.sample + z.sample,
    })),
    fc.tuple(tie("p"), tie("p"), fc.boolean()).map(([x, y, left]) => ({
      src: `(?:${x.src}|${y.src})`,
      sample: left ? x.sample : y.sample,
    })),
    fc.tuple(tie("p"), fc.constantFrom(...REPEATS), fc.nat(3)).map(([x, [q, lo, hi], n]) => ({
      src: `(${x.src})${q}`,
      sample: x.sample.repeat(lo + (n % (hi - lo + 1))),
    })),
    fc.tuple(tie("p"), fc.nat()).map(([x, seed]) => ({ src: `(?i:${x.src})`, sample: vary(x.sample, seed) })),
  ),
})).p;

const noise = fc
  .array(
    fc.constantFrom(
      "a",
      "b",
      "c",
      "k",
      "s",
      "A",
      "K",
      "\u212a",
      "\u017f",
      "é",
      "ß",
      "σ",
      "i",
      "n",
      "g",
      "_",
      " ",
      ".",
      "{",
    ),
    {
      maxLength: 8,
    },
  )
  .map((cs) => cs.join(""));
