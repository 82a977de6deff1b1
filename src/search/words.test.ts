import { describe, expect, it } from "vitest";
import { bm25Rank } from "./bm25.js";
import { parseKeywordQuery, tokenize } from "./words.js";

describe("tokenize", () => {
  it("splits identifiers into their parts", () => {
    expect(tokenize("parseConfig HTTPServer snake_case x2Y plain")).toEqual([
      "parse",
      "config",
      "http",
      "server",
      "snake",
      "case",
      "x2",
      "y",
      "plain",
    ]);
    expect(tokenize("Straße café — ünïcödé")).toEqual(["straße", "café", "ünïcödé"]);
  });
});

describe("parseKeywordQuery", () => {
  it("takes words, quoted phrases and -exclusions, dropping stop words", () => {
    expect(parseKeywordQuery('how is the "retry backoff" computed -test -"dead code"')).toEqual({
      terms: ["computed"],
      phrases: [["retry", "backoff"]],
      excludes: [["test"], ["dead", "code"]],
    });
    // An identifier also looks for its parts in order, so the exact name ranks first.
    expect(parseKeywordQuery("parseConfig load_file")).toEqual({
      terms: ["parse", "config", "load", "file"],
      phrases: [
        ["parse", "config"],
        ["load", "file"],
      ],
      excludes: [],
    });
  });

  it("keeps stop words when nothing else is left, and a one-word phrase is a word", () => {
    expect(parseKeywordQuery("to be or")).toEqual({ terms: ["to", "be", "or"], phrases: [], excludes: [] });
    expect(parseKeywordQuery("to be or not")).toEqual({ terms: ["not"], phrases: [], excludes: [] });
    expect(parseKeywordQuery('"only"')).toEqual({ terms: ["only"], phrases: [], excludes: [] });
    expect(parseKeywordQuery("-x")).toEqual({ terms: [], phrases: [], excludes: [["x"]] });
    expect(parseKeywordQuery("a-b")).toEqual({ terms: ["b"], phrases: [], excludes: [] });
  });
});

describe("bm25Rank", () => {
  const docs = (...texts: string[]) => texts.map((t, i) => ({ id: i, tokens: tokenize(t) }));
  const rank = (d: ReturnType<typeof docs>, q: string) => bm25Rank(d, parseKeywordQuery(q)).map((r) => r.doc.id);

  it("ranks a rare word above a common one, needs any word not all, and honours phrases and exclusions", () => {
    const d = docs(
      "error happened",
      "error again",
      "error and more error",
      "checksum mismatch",
      "error: checksum mismatch",
      "mismatch checksum",
      "nothing here",
      "still nothing",
      "more of nothing",
    );
    expect(rank(d, "checksum error")).toEqual([4, 3, 5, 2, 0, 1]);
    // As in FTS5, a word in more than half of the documents weighs next to nothing.
    expect(rank(d.slice(0, 5), "checksum error").slice(0, 2)).toEqual([3, 4]);
    expect(rank(d, '"checksum mismatch"')).toEqual([3, 4]);
    expect(rank(d, "checksum -error")).toEqual([3, 5]);
  });
});
