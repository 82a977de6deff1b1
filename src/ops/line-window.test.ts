// The streamed window gives the answers of splitting the whole decoded text, whatever the piece size:
// windows across piece boundaries, CRLF and UTF-8 characters split between pieces, no final newline,
// a BOM, lines past the end, binary content, and the byte cap.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import type { OpenFile } from "../volume/volume.js";
import { lineWindow } from "./line-window.js";
import { linesOf } from "./lines.js";

/** `data` as an OpenFile streaming `piece` bytes at a time; `known` gives it a volume-known hash. */
function pieces(data: Buffer, piece: number, known = false): OpenFile {
  return {
    size: data.length,
    ...(known ? { sha256: "known" } : {}),
    hash: async () => (known ? "known" : sha256(data)),
    read: async (offset, length) => Buffer.from(data.subarray(offset, offset + length)),
    async *stream() {
      for (let at = 0; at < data.length; at += piece) yield Buffer.from(data.subarray(at, at + piece));
    },
    close: async () => {},
  };
}

/** What the whole-text path answers. */
function expected(data: Buffer, start: number, end: number): { content: string; total: number } | "binary" {
  const text = decodeText(data);
  if (text === null) return "binary";
  const all = linesOf(text.startsWith("\uFEFF") ? text.slice(1) : text);
  return {
    content: all.slice(start - 1, end === Number.POSITIVE_INFINITY ? all.length : end).join(""),
    total: all.length,
  };
}

async function streamed(data: Buffer, piece: number, start: number, end: number, toEnd = true) {
  const w = await lineWindow(pieces(data, piece), { start, end, toEnd });
  return w.binary ? "binary" : { content: w.content, total: w.total };
}

const SAMPLES: Record<string, string> = {
  empty: "",
  "one line, no newline": "alpha",
  "one line": "alpha\n",
  "no final newline": "a\nbb\nccc",
  crlf: "a\r\nbb\r\nccc\r\n",
  "crlf, no final newline": "a\r\nbb\r\nccc",
  "mixed endings": "a\r\nb\nc\r\n\r\n\nd",
  "empty lines": "\n\n\n",
  bom: "\uFEFFfirst\nsecond\n",
  "bom only": "\uFEFF",
  "multi-byte": "é\n€€\n𝄞x𝄞\nü",
  "lone CR": "a\rb\nc\r",
};

describe("lineWindow", () => {
  for (const [name, text] of Object.entries(SAMPLES)) {
    it(`answers like the whole text: ${name}, every window and piece size`, async () => {
      const data = Buffer.from(text, "utf8");
      const total = linesOf(text.replace(/^\uFEFF/, "")).length;
      for (const piece of [1, 2, 3, 5, 64]) {
        for (let start = 1; start <= total + 2; start++) {
          for (const end of [start - 1, start, start + 1, total, total + 3, Number.POSITIVE_INFINITY]) {
            if (end < start - 1) continue;
            const want = expected(data, start, end);
            expect(await streamed(data, piece, start, end), `${piece} ${start}-${end}`).toEqual(want);
            // Stopping after the window gives the same content.
            const early = await lineWindow(pieces(data, piece), { start, end, toEnd: false });
            expect(early.binary ? "binary" : early.content, `early ${piece} ${start}-${end}`).toEqual(
              want === "binary" ? "binary" : want.content,
            );
          }
        }
      }
    });
  }

  it("matches on random texts and piece sizes (CRLF, multi-byte characters, no final newline)", async () => {
    const alphabet = fc.constantFrom("a", "b", "\n", "\r\n", "\r", "é", "€", "𝄞", " ");
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet, { maxLength: 60 }).map((a) => a.join("")),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: -1, max: 25 }),
        async (text, piece, start, span) => {
          const data = Buffer.from(text, "utf8");
          const end = span < 0 ? Number.POSITIVE_INFINITY : start - 1 + span;
          expect(await streamed(data, piece, start, end)).toEqual(expected(data, start, end));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("finds binary content: a NUL in the first 8 KiB, invalid UTF-8 anywhere, a character cut off at the end", async () => {
    const late = Buffer.concat([Buffer.from("x\n".repeat(10_000)), Buffer.from([0xff]), Buffer.from("\n")]);
    const cut = Buffer.concat([Buffer.from("abc\n"), Buffer.from("€").subarray(0, 2)]);
    for (const data of [Buffer.from("a\n\0b\n"), late, cut]) {
      for (const piece of [1, 3, 4096]) expect(await streamed(data, piece, 1, 2)).toBe("binary");
    }
    // A NUL after the first 8 KiB is text, as decodeText says.
    const nulLate = Buffer.from(`${"y\n".repeat(5000)}\0\n`);
    expect(await streamed(nulLate, 1000, 5001, 5001)).toEqual({ content: "\0\n", total: 5001 });
  });

  it("hashes the bytes when the volume does not know the hash, and keeps the volume's when it does", async () => {
    const data = Buffer.from("one\ntwo\nthree\n");
    const w = await lineWindow(pieces(data, 4), { start: 2, end: 2, toEnd: true });
    expect(w).toMatchObject({
      binary: false,
      content: "two\n",
      sha256: createHash("sha256").update(data).digest("hex"),
    });
    expect(await lineWindow(pieces(data, 4, true), { start: 2, end: 2, toEnd: true })).toMatchObject({
      sha256: "known",
    });
  });

  it("counts a window over maxBytes without keeping it", async () => {
    const data = Buffer.from("aaaa\nbbbb\ncccc\n");
    const w = await lineWindow(pieces(data, 3), { start: 1, end: 2, toEnd: true, maxBytes: 9 });
    expect(w).toMatchObject({ binary: false, content: null, bytes: 10, total: 3 });
    expect(await lineWindow(pieces(data, 3), { start: 1, end: 2, toEnd: true, maxBytes: 10 })).toMatchObject({
      content: "aaaa\nbbbb\n",
    });
  });

  it("stops reading after the window unless asked to scan to the end", async () => {
    const data = Buffer.from("1\n2\n3\n4\n5\n6\n7\n8\n");
    let read = 0;
    const file = pieces(data, 2);
    const counting: OpenFile = {
      ...file,
      async *stream() {
        for await (const p of file.stream()) {
          read += p.length;
          yield p;
        }
      },
    };
    expect(await lineWindow(counting, { start: 2, end: 3, toEnd: false })).toMatchObject({ content: "2\n3\n" });
    expect(read).toBe(6);
  });
});
