import { describe, expect, it } from "vitest";
import {
  filePassages,
  MAX_FILE_BYTES,
  MAX_PASSAGE_BYTES,
  MAX_PASSAGE_LINES,
  type Passage,
  textPassages,
} from "./passages.js";

const firstLines = (passages: Passage[]): string[] => passages.map((c) => c.text.split("\n")[0] as string);

/** Passages cover the non-blank lines of the text in order, without overlap, and respect the limits. */
function expectWellFormed(text: string, passages: Passage[]): void {
  const lines = text.split("\n");
  let previousEnd = 0;
  for (const [i, c] of passages.entries()) {
    expect(c.seq).toBe(i);
    expect(c.start_line).toBeGreaterThan(previousEnd);
    expect(c.end_line).toBeGreaterThanOrEqual(c.start_line);
    expect(c.text).toBe(lines.slice(c.start_line - 1, c.end_line).join("\n"));
    const skipped = lines.slice(previousEnd, c.start_line - 1);
    expect(skipped.every((l) => l.trim() === "")).toBe(true);
    expect(c.end_line - c.start_line + 1).toBeLessThanOrEqual(MAX_PASSAGE_LINES);
    if (c.start_line !== c.end_line) expect(Buffer.byteLength(c.text)).toBeLessThanOrEqual(MAX_PASSAGE_BYTES);
    previousEnd = c.end_line;
  }
}

const paragraph = (word: string, lines: number): string =>
  Array.from({ length: lines }, (_, i) => `${word} line ${i + 1} of the section`).join("\n");

describe("auto passages: Markdown", () => {
  it("splits at headings, keeps the enclosing headings as context and ignores # inside code fences", () => {
    const text = [
      "# Guide",
      "",
      paragraph("intro", 10),
      "",
      "## Install",
      "",
      paragraph("install", 12),
      "",
      "```sh",
      "# not a heading",
      "make install",
      "```",
      "",
      "### Linux",
      "",
      paragraph("linux", 10),
      "",
      "## Usage",
      paragraph("usage", 9),
    ].join("\n");
    const passages = textPassages(text, "/docs/guide.md", "auto");
    expectWellFormed(text, passages);
    expect(firstLines(passages)).toEqual(["# Guide", "## Install", "### Linux", "## Usage"]);
    expect(passages.map((c) => c.context)).toEqual(["", "Guide", "Guide > Install", "Guide"]);
    expect(passages[1]?.text).toContain("# not a heading");
  });

  it("merges small sections with the next instead of making tiny passages", () => {
    const text = ["# A", "1", "2", "3", "## B", "4", "5", "6", "## C", "7", "8", "9", "## D", paragraph("d", 20)].join(
      "\n",
    );
    const passages = textPassages(text, "/x.md", "auto");
    expectWellFormed(text, passages);
    expect(passages).toHaveLength(2);
    expect(firstLines(passages)).toEqual(["# A", "## D"]);
  });
});

describe("auto passages: code", () => {
  it("starts a passage at each top-level definition, with its doc comment and decorators", () => {
    const fn = (name: string, body: number) =>
      [`/** ${name} does things. */`, `export function ${name}() {`, ...Array(body).fill("  work();"), "}"].join("\n");
    const text = ['import { x } from "y";', "", fn("alpha", 12), "", fn("beta", 12), "", fn("gamma", 12)].join("\n");
    const passages = textPassages(text, "/src/a.ts", "auto");
    expectWellFormed(text, passages);
    expect(firstLines(passages)).toEqual([
      'import { x } from "y";',
      "/** beta does things. */",
      "/** gamma does things. */",
    ]);
    expect(passages[0]?.text).toContain("export function alpha()");

    const py = [
      "import os",
      "",
      "@cached",
      "def load(path):",
      paragraph("    x =", 10),
      "",
      "class Store:",
      paragraph("    y =", 10),
    ].join("\n");
    expect(firstLines(textPassages(py, "/m.py", "auto"))).toEqual(["import os", "class Store:"]);
    const go = [
      "package main",
      "",
      "// Run runs.",
      "func Run() {",
      paragraph("\tx :=", 10),
      "}",
      "type T struct {",
      paragraph("\tf", 10),
      "}",
    ].join("\n");
    expect(firstLines(textPassages(go, "/m.go", "auto"))).toEqual(["package main", "type T struct {"]);
  });

  it("cuts a long definition into pieces within the limits", () => {
    const body = Array.from({ length: 400 }, (_, i) => `  const v${i} = compute(${i});`).join("\n");
    const text = `export function huge() {\n${body}\n}\n`;
    const passages = textPassages(text, "/h.ts", "auto");
    expectWellFormed(text.replace(/\n$/, ""), passages);
    expect(passages.length).toBeGreaterThanOrEqual(4);
    const wide = Array.from({ length: 100 }, () => "x".repeat(200)).join("\n");
    for (const c of textPassages(wide, "/w.txt", "auto"))
      expect(Buffer.byteLength(c.text)).toBeLessThanOrEqual(MAX_PASSAGE_BYTES);
  });
});

describe("auto passages: text and data", () => {
  it("packs blank-line blocks of plain text up to a soft size", () => {
    const text = Array.from({ length: 30 }, (_, i) => paragraph(`p${i}`, 4)).join("\n\n");
    const passages = textPassages(text, "/notes.txt", "auto");
    expectWellFormed(text, passages);
    expect(passages.length).toBeGreaterThan(1);
    for (const c of passages.slice(0, -1)) expect(c.end_line - c.start_line + 1).toBeLessThanOrEqual(60);
    // Every passage starts at a block's first line.
    for (const c of passages) expect(c.text.split("\n")[0]).toMatch(/ line 1 of/);
  });

  it("makes one passage per JSONL record", () => {
    const text = ['{"a":1}', '{"b":2}', "", '{"c":3}'].join("\n");
    expect(textPassages(text, "/log.jsonl", "auto").map((c) => [c.start_line, c.text])).toEqual([
      [1, '{"a":1}'],
      [2, '{"b":2}'],
      [4, '{"c":3}'],
    ]);
  });

  it("skips binary and huge files; empty or blank files have no passages; CRLF and a BOM are handled", () => {
    expect(filePassages(Buffer.from([1, 0, 2]), "/b.bin", "auto")).toEqual({ passages: [], skipped: "binary" });
    expect(filePassages(Buffer.alloc(MAX_FILE_BYTES + 1, 97), "/big.txt", "auto")).toEqual({
      passages: [],
      skipped: "huge",
    });
    expect(textPassages("", "/e.txt", "auto")).toEqual([]);
    expect(textPassages("\n\n  \n", "/e.txt", "auto")).toEqual([]);
    expect(textPassages("\uFEFFone\r\ntwo\r\n", "/c.txt", "auto")).toEqual([
      { seq: 0, start_line: 1, end_line: 2, text: "one\ntwo", context: "" },
    ]);
  });
});

describe("regex passages", () => {
  it("are windows of 40 lines, ending early at a blank line in the last quarter", () => {
    const lines = Array.from({ length: 100 }, (_, i) => (i === 35 ? "" : `line ${i + 1}`));
    const text = lines.join("\n");
    const passages = textPassages(text, "/doc.md", "regex");
    expectWellFormed(text, passages);
    expect(passages.map((c) => [c.start_line, c.end_line])).toEqual([
      [1, 35],
      [37, 76],
      [77, 100],
    ]);
    expect(passages.every((c) => c.context === "")).toBe(true);
  });
});
