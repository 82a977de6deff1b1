// The byte translations against RE2 itself: on any line, a translated pattern run on the line's
// UTF-8 bytes (as latin1) matches exactly when RE2 matches the decoded line.
import fc from "fast-check";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { byteSource, caselessSource } from "./byte-regex.js";

const CHARS = ["a", "b", "c", "A", "K", "k", "s", "S", "\u212a", "\u017f", "é", "É", "日", "\u{1F600}", "0", "7"];
const MORE = [" ", "\t", "\r", "\v", "-", ".", "_", "\\", "(", "x", "y", "z", "\u00a0", "\u2028"];
const line = fc.array(fc.constantFrom(...CHARS, ...MORE), { maxLength: 12 }).map((cs) => cs.join(""));

const PATTERNS = [
  "a.c",
  "a..c",
  "a.{2}c",
  "a[^x]c",
  "a\\Sc",
  "a\\Wc",
  "a\\Dc",
  "\\s",
  "\\S\\s\\S",
  "\\bk",
  "k\\b",
  ".\\B",
  "\\B.",
  "\\w+",
  "\\d{2}",
  "[a-c]+\\d*",
  "[^a-c]",
  "[\\d\\s]x",
  "(?:ab|c)+é",
  "é.",
  ".日",
  "[x-z]?\\\\",
  "\\(",
  "\\t",
  "\\v",
  "a*",
  "x|y|z",
  "[]a]",
  "[^]a]",
  "\\.\\.",
  "-+",
  "a.*?c",
  "\\x41",
  "\\pL",
];

const latin1 = (s: string): string => Buffer.from(s, "utf8").toString("latin1");

describe("byteSource", () => {
  it("matches a line's bytes exactly when RE2 matches the line (property)", () => {
    const compiled = PATTERNS.flatMap((p) => {
      const src = byteSource(p);
      return src === null ? [] : [{ p, re2: RE2JS.compile(p), bytes: new RegExp(src) }];
    });
    expect(compiled.length).toBeGreaterThan(PATTERNS.length - 4);
    fc.assert(
      fc.property(line, (l) => {
        for (const c of compiled) expect([c.p, c.bytes.test(latin1(l))]).toEqual([c.p, c.re2.matcher(l).find()]);
      }),
      { numRuns: 3000 },
    );
  });

  it("leaves out what it cannot translate exactly", () => {
    for (const p of ["(?i)a", "^a", "a$", "\\Aa", "\\pL", "[[:alpha:]]", "\\Qa\\E", "a\\n", "[\\n]", "a{", "\\x{41}"]) {
      expect([p, byteSource(p)]).toEqual([p, null]);
    }
  });
});

describe("caselessSource", () => {
  it("matches every spelling RE2 folds together, and no other", () => {
    fc.assert(
      fc.property(line, fc.constantFrom("ak", "S日", "\u212a", "日a", "x.s"), (l, p) => {
        const re2 = RE2JS.compile(RE2JS.quote(p), RE2JS.CASE_INSENSITIVE);
        expect(new RegExp(caselessSource(p) as string).test(latin1(l))).toBe(re2.matcher(l).find());
      }),
      { numRuns: 3000 },
    );
    expect(caselessSource("É")).toBeNull();
  });
});
