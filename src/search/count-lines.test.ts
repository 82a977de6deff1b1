// countLines against the reference rule (split after the BOM on LF / CRLF, count the lines that
// hold the literal), on bytes and on latin1 views alike.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { countable, countLines } from "./count-lines.js";

function reference(text: string, literal: string, max = Number.POSITIVE_INFINITY): number {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = body === "" ? [] : body.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return Math.min(max, lines.filter((l) => l.includes(literal)).length);
}

function both(text: string, literal: string, max = Number.POSITIVE_INFINITY): [number, number] {
  const bytes = Buffer.from(text, "utf8");
  const needle = Buffer.from(literal, "utf8");
  return [countLines(bytes, needle, max), countLines(bytes.toString("latin1"), needle.toString("latin1"), max)];
}

describe("countLines", () => {
  it.each([
    ["hits twice on a line count once", "ab ab\nx\nab\n", "ab", 2],
    ["CRLF", "ab\r\nab\r\nc\r\n", "ab", 2],
    ["no final newline", "x\nab", "ab", 1],
    ["a BOM is no line's text", "\uFEFFab\nab\n", "\uFEFFab", 0],
    ["the literal right after a BOM", "\uFEFFab\n", "ab", 1],
    ["non-ASCII", "café crème\ncafé\n", "é c", 1],
    ["a literal at a line's very end before CRLF", "xab\r\n", "ab", 1],
    ["empty text", "", "ab", 0],
  ])("%s", (_name, text, literal, expected) => {
    expect(reference(text, literal)).toBe(expected);
    expect(both(text, literal)).toEqual([expected, expected]);
  });

  it("stops at max", () => {
    expect(both("ab\nab\nab\n", "ab", 2)).toEqual([2, 2]);
  });

  it("refuses literals with a line end", () => {
    expect(countable("a\rb")).toBe(false);
    expect(countable("a\nb")).toBe(false);
    expect(countable("ab")).toBe(true);
  });

  it("equals the reference on random texts (property)", () => {
    const piece = fc.constantFrom("ab", "a", "b", "\n", "\r\n", "\r", " ", "é", "\uFEFF", "abab");
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }).map((p) => p.join("")),
        fc.constantFrom("ab", "a", "ba", "b a", "é", "abab"),
        fc.integer({ min: 1, max: 5 }),
        (text, literal, max) => {
          const expected = reference(text, literal, max);
          expect(both(text, literal, max)).toEqual([expected, expected]);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
