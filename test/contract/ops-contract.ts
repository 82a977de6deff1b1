// The file operations' contract, run against every Volume: each operation's results, its edge cases
// and its error codes. Uses only the Volume interface and the ops, never a volume's internals.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import {
  createExclusive,
  deleteLines,
  type GrepArgs,
  glob,
  grep as grepOp,
  insert,
  lines,
  list,
  mkdir,
  patch,
  read,
  remove,
  rename,
  replace,
  replaceArgs,
  write,
} from "../../src/ops/index.js";
import { linesOf, SMALL_FILE_BYTES } from "../../src/ops/lines.js";
import type { SearchIndexes } from "../../src/search/indexes.js";
import type { Volume } from "../../src/volume/volume.js";

/** A fresh volume, with the search indexes its home passes beside it (none for a plain directory). */
export type MakeVolume = () => Promise<{ volume: Volume; indexes?: SearchIndexes; cleanup: () => Promise<void> }>;

/** Resolves to the rejection's code (and message), failing the test if the promise resolves. */
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { code: err.code ?? "(no code)", message: err.message ?? "" };
  }
  throw new Error("expected the operation to fail, but it succeeded");
}

export function opsContract(name: string, makeVolume: MakeVolume): void {
  describe(`file operations on ${name}`, () => {
    let volume: Volume;
    let indexes: SearchIndexes | undefined;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ volume, indexes, cleanup } = await makeVolume());
    });
    // grep as every surface calls it: with the volume's home's indexes beside it.
    const grep = (v: Volume, args: GrepArgs) => grepOp(v, args, { indexes });
    afterEach(() => cleanup());

    const put = (path: string, content: string | Buffer) =>
      typeof content === "string"
        ? write(volume, { path, content })
        : write(volume, { path, content: content.toString("base64"), encoding: "base64" });
    const cat = async (path: string) => (await volume.readFile(path)).toString("utf8");
    const codeOf = async (p: Promise<unknown>) => (await failure(p)).code;

    describe("paths", () => {
      it("takes a relative path from / and resolves . and .. inside the volume", async () => {
        await write(volume, { path: "src/./lib/../main.go", content: "package main\n" });
        expect(await cat("/src/main.go")).toBe("package main\n");
        expect((await read(volume, { path: "//src//main.go/" })).content).toBe("package main\n");
      });

      it("refuses .. above / and NUL bytes with INVALID_PATH", async () => {
        expect(await codeOf(read(volume, { path: "/../etc/passwd" }))).toBe("INVALID_PATH");
        expect(await codeOf(write(volume, { path: "../x", content: "x" }))).toBe("INVALID_PATH");
        expect(await codeOf(write(volume, { path: "/a\0b", content: "x" }))).toBe("INVALID_PATH");
        expect(await codeOf(rename(volume, { path: "/a", new_path: "/../b" }))).toBe("INVALID_PATH");
        expect(await codeOf(list(volume, { path: "/a/../../" }))).toBe("INVALID_PATH");
      });
    });

    describe("read", () => {
      it("returns text with its size and sha256", async () => {
        await put("/a.txt", "hello\n");
        expect(await read(volume, { path: "/a.txt" })).toMatchObject({
          path: "/a.txt",
          kind: "file",
          size: 6,
          sha256: sha256("hello\n"),
          content: "hello\n",
        });
      });

      it("keeps CRLF line endings and a BOM as stored", async () => {
        await put("/w.txt", "\uFEFFone\r\ntwo\r\n");
        expect((await read(volume, { path: "/w.txt" })).content).toBe("\uFEFFone\r\ntwo\r\n");
      });

      it("reports a missing file as NOT_FOUND and a directory as INVALID_ARGUMENT pointing to list", async () => {
        expect(await codeOf(read(volume, { path: "/nope.txt" }))).toBe("NOT_FOUND");
        await mkdir(volume, { path: "/d" });
        const err = await failure(read(volume, { path: "/d" }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/directory.*list/);
      });

      it("flags binary files and returns them only as base64 when asked", async () => {
        const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]);
        await put("/img.png", bytes);
        const plain = await read(volume, { path: "/img.png" });
        expect(plain).toMatchObject({ kind: "file", size: 7, sha256: sha256(bytes), binary: true });
        expect(plain.content).toBeUndefined();
        const b64 = await read(volume, { path: "/img.png", encoding: "base64" });
        expect(b64).toMatchObject({ encoding: "base64", binary: true });
        expect(Buffer.from(b64.content ?? "", "base64")).toEqual(bytes);
      });

      it("treats invalid UTF-8 as binary", async () => {
        await put("/latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
        const r = await read(volume, { path: "/latin1.txt" });
        expect(r.binary).toBe(true);
        expect(r.content).toBeUndefined();
      });

      it("returns a text file as base64 when asked", async () => {
        await put("/a.txt", "héllo");
        const r = await read(volume, { path: "/a.txt", encoding: "base64" });
        expect(r.encoding).toBe("base64");
        expect(Buffer.from(r.content ?? "", "base64").toString("utf8")).toBe("héllo");
      });
    });

    describe("lines", () => {
      const five = "one\ntwo\nthree\nfour\nfive\n";

      it("returns an inclusive 1-based slice with the total and the file's sha256", async () => {
        await put("/f.txt", five);
        expect(await lines(volume, { path: "/f.txt", start: 2, end: 3 })).toMatchObject({
          path: "/f.txt",
          start: 2,
          end: 3,
          total_lines: 5,
          content: "two\nthree\n",
          sha256: sha256(five),
        });
      });

      it("reads to the end by default or with -1, and clamps an end past the file", async () => {
        await put("/f.txt", five);
        expect((await lines(volume, { path: "/f.txt", start: 4 })).content).toBe("four\nfive\n");
        expect((await lines(volume, { path: "/f.txt", start: 4, end: -1 })).end).toBe(5);
        const clamped = await lines(volume, { path: "/f.txt", start: 3, end: 99 });
        expect(clamped).toMatchObject({ start: 3, end: 5, content: "three\nfour\nfive\n" });
      });

      it("answers a start past the end with empty content, not an error", async () => {
        await put("/f.txt", five);
        const r = await lines(volume, { path: "/f.txt", start: 9 });
        expect(r).toMatchObject({ content: "", total_lines: 5 });
        expect(r.note).toMatch(/past the end/);
        await put("/empty.txt", "");
        expect(await lines(volume, { path: "/empty.txt", start: 1 })).toMatchObject({ content: "", total_lines: 0 });
      });

      it("refuses start < 1 and end < start with INVALID_ARGUMENT", async () => {
        await put("/f.txt", five);
        expect(await codeOf(lines(volume, { path: "/f.txt", start: 0 }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(lines(volume, { path: "/f.txt", start: 3, end: 2 }))).toBe("INVALID_ARGUMENT");
      });

      it("keeps CRLF endings and a last line without a newline", async () => {
        await put("/w.txt", "\uFEFFa\r\nb\r\nc");
        expect(await lines(volume, { path: "/w.txt", start: 1, end: 2 })).toMatchObject({
          content: "a\r\nb\r\n",
          total_lines: 3,
        });
        expect((await lines(volume, { path: "/w.txt", start: 3 })).content).toBe("c");
      });

      it("refuses binary files and missing files", async () => {
        await put("/b.bin", Buffer.from([0, 1, 2]));
        expect(await codeOf(lines(volume, { path: "/b.bin", start: 1 }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(lines(volume, { path: "/none", start: 1 }))).toBe("NOT_FOUND");
      });

      it("answers a file it streams (over SMALL_FILE_BYTES) as it answers a small one", async () => {
        const body = Array.from({ length: 20_000 }, (_, i) => `line ${i} é\r\n`).join("");
        const text = `\uFEFF${body}last`;
        expect(Buffer.byteLength(text)).toBeGreaterThan(SMALL_FILE_BYTES);
        await put("/big.txt", text);
        const all = linesOf(text.slice(1));
        for (const [start, end] of [
          [1, 2],
          [10_000, 10_002],
          [20_000, -1],
          [20_001, -1],
          [20_002, 20_005],
        ] as const) {
          const last = end === -1 ? all.length : Math.min(end, all.length);
          expect(await lines(volume, { path: "/big.txt", start, end }), `${start}-${end}`).toMatchObject({
            content: all.slice(start - 1, last).join(""),
            total_lines: 20_001,
            end: start > all.length ? start - 1 : last,
            sha256: sha256(text),
          });
        }
        await put("/big.bin", Buffer.concat([Buffer.from(text), Buffer.from([0xff])]));
        expect(await codeOf(lines(volume, { path: "/big.bin", start: 1, end: 1 }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(lines(volume, { path: "/big.txt", start: 1 }, { maxContentBytes: 1000 }))).toBe(
          "QUOTA_EXCEEDED",
        );
      });
    });

    describe("openFile", () => {
      it("reads ranges and streams the bytes of the file it opened", async () => {
        const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => `${i}\n`).join(""));
        await put("/f.txt", data);
        const file = await volume.openFile("/f.txt");
        try {
          expect(file.size).toBe(data.length);
          if (file.sha256 !== undefined) expect(file.sha256).toBe(sha256(data));
          expect((await file.read(10, 20)).equals(data.subarray(10, 30))).toBe(true);
          expect((await file.read(data.length - 3, 10)).equals(data.subarray(data.length - 3))).toBe(true);
          expect((await file.read(data.length + 1, 10)).length).toBe(0);
          expect((await file.read(0, data.length)).equals(data)).toBe(true);
          // Replaced meanwhile: the opened file still reads as it was.
          await put("/f.txt", "changed\n");
          const pieces: Buffer[] = [];
          for await (const piece of file.stream()) pieces.push(piece);
          expect(Buffer.concat(pieces).equals(data)).toBe(true);
        } finally {
          await file.close();
        }
      });

      it("opens an empty file, and refuses directories and missing files", async () => {
        await put("/empty.txt", "");
        const empty = await volume.openFile("/empty.txt");
        expect(empty.size).toBe(0);
        expect((await empty.read(0, 10)).length).toBe(0);
        await empty.close();
        await mkdir(volume, { path: "/d" });
        expect(await codeOf(volume.openFile("/d"))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(volume.openFile("/none"))).toBe("NOT_FOUND");
      });
    });

    describe("list", () => {
      beforeEach(async () => {
        await put("/b.txt", "b");
        await put("/a.txt", "aa");
        await put("/z/deep/x.txt", "x");
        await put("/m/y.txt", "y");
        await put("/.hidden", "h");
      });

      it("lists / by default: directories first, then by name, with sizes and ISO times", async () => {
        const r = await list(volume, {});
        expect(r.path).toBe("/");
        expect(r.items.map((i) => i.path)).toEqual(["/m", "/z", "/.hidden", "/a.txt", "/b.txt"]);
        const a = r.items.find((i) => i.name === "a.txt");
        expect(a).toMatchObject({ path: "/a.txt", name: "a.txt", kind: "file", size: 2 });
        expect(new Date(a?.modified_at ?? "").toISOString()).toBe(a?.modified_at);
        expect(r.items[0]?.kind).toBe("dir");
      });

      it("goes deeper with depth, each directory followed by its own contents", async () => {
        const r = await list(volume, { path: "/", depth: 3 });
        expect(r.items.map((i) => i.path)).toEqual([
          "/m",
          "/m/y.txt",
          "/z",
          "/z/deep",
          "/z/deep/x.txt",
          "/.hidden",
          "/a.txt",
          "/b.txt",
        ]);
        expect((await list(volume, { path: "/z", depth: 1 })).items.map((i) => i.path)).toEqual(["/z/deep"]);
      });

      it("lists a file as just that file, and a missing path as NOT_FOUND", async () => {
        expect((await list(volume, { path: "/a.txt" })).items).toMatchObject([{ path: "/a.txt", kind: "file" }]);
        expect(await codeOf(list(volume, { path: "/missing" }))).toBe("NOT_FOUND");
      });
    });

    describe("glob", () => {
      beforeEach(async () => {
        await put("/main.go", "");
        await put("/cmd/tool/tool.go", "");
        await put("/cmd/tool/tool_test.go", "");
        await put("/.github/ci.yml", "");
        await put("/.env", "");
        await put("/docs/api.md", "");
        await put("/docs/about.txt", "");
        await mkdir(volume, { path: "/apps" });
      });

      it("matches basenames at every depth, sorted by path", async () => {
        const r = await glob(volume, { pattern: "*.go" });
        expect(r.count).toBe(3);
        expect(r.items.map((i) => i.path)).toEqual(["/cmd/tool/tool.go", "/cmd/tool/tool_test.go", "/main.go"]);
        expect(r.items[0]).toMatchObject({ name: "tool.go", kind: "file" });
      });

      it("matches hidden files, braces, and stays below path", async () => {
        expect((await glob(volume, { pattern: ".*" })).items.map((i) => i.path)).toEqual(["/.env"]);
        expect((await glob(volume, { pattern: "*.yml" })).items.map((i) => i.path)).toEqual(["/.github/ci.yml"]);
        expect((await glob(volume, { pattern: "{api,about}*" })).items.map((i) => i.path)).toEqual([
          "/docs/about.txt",
          "/docs/api.md",
        ]);
        expect((await glob(volume, { path: "/cmd", pattern: "*" })).count).toBe(2);
      });

      it("filters by kind: file (default), dir, any", async () => {
        expect((await glob(volume, { pattern: "a*" })).items.map((i) => i.path)).toEqual([
          "/docs/about.txt",
          "/docs/api.md",
        ]);
        expect((await glob(volume, { pattern: "a*", kind: "dir" })).items.map((i) => i.path)).toEqual(["/apps"]);
        expect((await glob(volume, { pattern: "a*", kind: "any" })).count).toBe(3);
      });

      it("matches a pattern with a slash against the path below `path`", async () => {
        expect((await glob(volume, { pattern: "cmd/**/*_test.go" })).items.map((i) => i.path)).toEqual([
          "/cmd/tool/tool_test.go",
        ]);
      });

      it("matches patterns with a slash against whole relative paths, ** crossing any depth", async () => {
        const paths = async (a: Parameters<typeof glob>[1]) => (await glob(volume, a)).items.map((i) => i.path);
        expect(await paths({ pattern: "**/*.go" })).toEqual([
          "/cmd/tool/tool.go",
          "/cmd/tool/tool_test.go",
          "/main.go",
        ]);
        expect(await paths({ pattern: "cmd/**" })).toEqual(["/cmd/tool/tool.go", "/cmd/tool/tool_test.go"]);
        // Relative to `path`; a leading "/" or "./" means the same.
        expect(await paths({ path: "/cmd", pattern: "tool/*_test.go" })).toEqual(["/cmd/tool/tool_test.go"]);
        expect(await paths({ path: "/cmd", pattern: "/tool/*.go" })).toEqual([
          "/cmd/tool/tool.go",
          "/cmd/tool/tool_test.go",
        ]);
        expect(await paths({ pattern: "./docs/a*" })).toEqual(["/docs/about.txt", "/docs/api.md"]);
        // Hidden directories and files take part like any other.
        expect(await paths({ pattern: ".github/*.yml" })).toEqual(["/.github/ci.yml"]);
        expect(await paths({ pattern: "**/.*" })).toEqual(["/.env"]);
        expect(await paths({ pattern: "cmd/*", kind: "dir" })).toEqual(["/cmd/tool"]);
        // A path pattern must match the whole path: "tool/*.go" is not found from "/".
        expect(await paths({ pattern: "tool/*.go" })).toEqual([]);
        expect(await paths({ pattern: "*/tool.go" })).toEqual([]);
      });

      it("reports a missing start as NOT_FOUND", async () => {
        expect(await codeOf(glob(volume, { path: "/nowhere", pattern: "*" }))).toBe("NOT_FOUND");
      });
    });

    describe("grep", () => {
      beforeEach(async () => {
        await put("/src/a.go", "package a\n// TODO: fix a.b\nfunc A() {}\nvar axb = 1\n");
        await put("/src/b.go", "package b\r\n// todo later\r\nfunc B() {}\r\n");
        await put("/README.md", "TODO list\nnothing else\n");
        await put("/bin/tool", Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]));
      });

      it("searches fixed strings by default, sorted by path then line, skipping binary files", async () => {
        const r = await grep(volume, { pattern: "TODO" });
        expect(r).toEqual({
          mode: "matches",
          matches: [
            { path: "/README.md", line: 1, text: "TODO list" },
            { path: "/src/a.go", line: 2, text: "// TODO: fix a.b" },
          ],
        });
        // A fixed string has no special characters.
        const dots = await grep(volume, { pattern: "a.b" });
        expect(dots.mode === "matches" && dots.matches.map((m) => m.line)).toEqual([2]);
      });

      it("ignores case on request and reports CRLF lines without the \\r", async () => {
        const r = await grep(volume, { pattern: "todo", ignore_case: true, path: "/src" });
        expect(r.mode === "matches" && r.matches).toEqual([
          { path: "/src/a.go", line: 2, text: "// TODO: fix a.b" },
          { path: "/src/b.go", line: 2, text: "// todo later" },
        ]);
      });

      it("runs RE2 regular expressions and refuses a broken one with the engine's reason", async () => {
        const r = await grep(volume, { pattern: "^func [A-Z]\\(", regexp: true });
        expect(r.mode === "matches" && r.matches.map((m) => m.path)).toEqual(["/src/a.go", "/src/b.go"]);
        const err = await failure(grep(volume, { pattern: "func (", regexp: true }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/missing closing \)/);
        // Backtracking bombs are linear under RE2: this returns rather than hanging.
        await put("/evil.txt", `${"a".repeat(50_000)}!\n`);
        const bomb = await grep(volume, { pattern: "^(a+)+$", regexp: true, path: "/evil.txt" });
        expect(bomb.mode === "matches" && bomb.matches).toEqual([]);
      });

      it("matches a glob against the whole line", async () => {
        const anywhere = await grep(volume, { pattern: "*TODO*", glob: true });
        expect(anywhere.mode === "matches" && anywhere.matches.length).toBe(2);
        const prefix = await grep(volume, { pattern: "TODO*", glob: true });
        expect(prefix.mode === "matches" && prefix.matches.map((m) => m.path)).toEqual(["/README.md"]);
        const cls = await grep(volume, { pattern: "func [AB]()*", glob: true });
        expect(cls.mode === "matches" && cls.matches.length).toBe(2);
      });

      it("supports word_regexp, line_regexp and invert_match", async () => {
        const word = await grep(volume, { pattern: "a", word_regexp: true, path: "/src/a.go" });
        expect(word.mode === "matches" && word.matches.map((m) => m.line)).toEqual([1, 2]);
        const line = await grep(volume, { pattern: "nothing else", line_regexp: true });
        expect(line.mode === "matches" && line.matches.map((m) => m.path)).toEqual(["/README.md"]);
        const partial = await grep(volume, { pattern: "nothing", line_regexp: true });
        expect(partial.mode === "matches" && partial.matches).toEqual([]);
        const inverted = await grep(volume, { pattern: "TODO", invert_match: true, path: "/README.md" });
        expect(inverted.mode === "matches" && inverted.matches).toEqual([
          { path: "/README.md", line: 2, text: "nothing else" },
        ]);
      });

      it("returns files or counts instead of lines, and stops at max_count per file", async () => {
        expect(await grep(volume, { pattern: "e", files_with_matches: true })).toEqual({
          mode: "files",
          files: ["/README.md", "/src/a.go", "/src/b.go"],
        });
        expect(await grep(volume, { pattern: "func", count: true })).toEqual({
          mode: "counts",
          counts: [
            { path: "/src/a.go", count: 1 },
            { path: "/src/b.go", count: 1 },
          ],
        });
        const capped = await grep(volume, { pattern: "a", path: "/src/a.go", max_count: 2 });
        expect(capped.mode === "matches" && capped.matches.map((m) => m.line)).toEqual([1, 2]);
        expect(await grep(volume, { pattern: "a", path: "/src/a.go", count: true, max_count: 3 })).toEqual({
          mode: "counts",
          counts: [{ path: "/src/a.go", count: 3 }],
        });
      });

      it("refuses two pattern syntaxes at once, and files_with_matches with count", async () => {
        expect(await codeOf(grep(volume, { pattern: "x", glob: true, regexp: true }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(grep(volume, { pattern: "x", fixed_strings: true, regexp: true }))).toBe(
          "INVALID_ARGUMENT",
        );
        expect(await codeOf(grep(volume, { pattern: "x", files_with_matches: true, count: true }))).toBe(
          "INVALID_ARGUMENT",
        );
        expect(await codeOf(grep(volume, { pattern: "x", path: "/missing" }))).toBe("NOT_FOUND");
      });

      it("returns context lines before and after each selected line, fewer at the ends of a file", async () => {
        const r = await grep(volume, { pattern: "TODO", path: "/src", context_before: 1, context_after: 1 });
        expect(r).toEqual({
          mode: "matches",
          matches: [
            { path: "/src/a.go", line: 2, text: "// TODO: fix a.b", before: ["package a"], after: ["func A() {}"] },
          ],
        });
        const edges = await grep(volume, {
          pattern: "b",
          ignore_case: true,
          path: "/src/b.go",
          context_before: 3,
          context_after: 3,
        });
        // CRLF endings are not part of context lines either; a final newline starts no extra line.
        expect(edges.mode === "matches" && edges.matches).toEqual([
          { path: "/src/b.go", line: 1, text: "package b", before: [], after: ["// todo later", "func B() {}"] },
          { path: "/src/b.go", line: 3, text: "func B() {}", before: ["package b", "// todo later"], after: [] },
        ]);
        const onlyAfter = await grep(volume, { pattern: "axb", context_after: 2 });
        expect(onlyAfter.mode === "matches" && onlyAfter.matches).toEqual([
          { path: "/src/a.go", line: 4, text: "var axb = 1", after: [] },
        ]);
      });

      it("narrows the files searched with include and exclude globs", async () => {
        const files = async (a: Omit<Parameters<typeof grep>[1], "pattern">) => {
          const r = await grep(volume, { pattern: "e", files_with_matches: true, ...a });
          return r.mode === "files" ? r.files : [];
        };
        expect(await files({})).toEqual(["/README.md", "/src/a.go", "/src/b.go"]);
        expect(await files({ include: "*.go" })).toEqual(["/src/a.go", "/src/b.go"]);
        expect(await files({ include: ["*.md", "a.*"] })).toEqual(["/README.md", "/src/a.go"]);
        expect(await files({ include: "src/**", exclude: "b.go" })).toEqual(["/src/a.go"]);
        // A name without a slash excludes a directory of that name too.
        expect(await files({ exclude: "src" })).toEqual(["/README.md"]);
        expect(await files({ exclude: ["*.md", "src/a.*"] })).toEqual(["/src/b.go"]);
        // Path globs are relative to the search path.
        expect(await files({ path: "/src", include: "b.*" })).toEqual(["/src/b.go"]);
        expect(await files({ path: "/src", include: "src/b.*" })).toEqual([]);
      });

      it("pages with limit and cursor, in path then line order, until nothing is truncated", async () => {
        const all = await grep(volume, { pattern: "e" });
        expect(all.mode === "matches" && all.matches.length).toBe(4);
        expect(all.truncated).toBeUndefined();
        for (const a of [{}, { files_with_matches: true }, { count: true }, { max_count: 1 }, { context_after: 1 }]) {
          const whole = await grep(volume, { pattern: "e", ...a });
          const pages: Awaited<ReturnType<typeof grep>>[] = [];
          let cursor: string | undefined;
          do {
            const page = await grep(volume, { pattern: "e", ...a, limit: 2, cursor });
            pages.push(page);
            cursor = page.cursor;
            expect(page.truncated).toBe(cursor ? true : undefined);
          } while (cursor && pages.length < 10);
          const items = (r: Awaited<ReturnType<typeof grep>>): unknown[] =>
            r.mode === "matches" ? r.matches : r.mode === "files" ? r.files : r.counts;
          expect(pages.flatMap(items)).toEqual(items(whole));
          expect(pages.slice(0, -1).every((p) => items(p).length === 2)).toBe(true);
        }
      });

      it("keeps counting max_count across pages, and refuses a cursor from another search", async () => {
        const seen: number[] = [];
        let cursor: string | undefined;
        do {
          const page = await grep(volume, { pattern: "a", path: "/src/a.go", max_count: 3, limit: 1, cursor });
          if (page.mode === "matches") seen.push(...page.matches.map((m) => m.line));
          cursor = page.cursor;
        } while (cursor && seen.length < 10);
        expect(seen).toEqual([1, 2, 4]);
        const first = await grep(volume, { pattern: "e", limit: 1 });
        expect(first.cursor).toBeDefined();
        expect(await codeOf(grep(volume, { pattern: "f", limit: 1, cursor: first.cursor }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(grep(volume, { pattern: "e", cursor: "not-a-cursor" }))).toBe("INVALID_ARGUMENT");
        // limit may change between pages.
        const rest = await grep(volume, { pattern: "e", limit: 10, cursor: first.cursor });
        expect(rest.mode === "matches" && rest.matches.length).toBe(3);
      });
    });

    describe("write", () => {
      it("creates parent directories and reports the mutation", async () => {
        const r = await write(volume, { path: "/a/b/c.txt", content: "hi" });
        expect(r).toMatchObject({ path: "/a/b/c.txt", kind: "file", size: 2, sha256: sha256("hi") });
        expect(typeof r.revision).toBe("number");
        expect((await volume.stat("/a/b"))?.kind).toBe("dir");
        const again = await write(volume, { path: "/a/b/c.txt", content: "hello" });
        expect(again.revision).toBeGreaterThan(r.revision);
        expect(await cat("/a/b/c.txt")).toBe("hello");
      });

      it("writes base64 content as bytes and refuses invalid base64", async () => {
        await write(volume, {
          path: "/b.bin",
          content: Buffer.from([0, 255, 7]).toString("base64"),
          encoding: "base64",
        });
        expect(await volume.readFile("/b.bin")).toEqual(Buffer.from([0, 255, 7]));
        expect(await codeOf(write(volume, { path: "/c.bin", content: "not base64!", encoding: "base64" }))).toBe(
          "INVALID_ARGUMENT",
        );
      });

      it("refuses to write over a directory or below a file", async () => {
        await mkdir(volume, { path: "/d" });
        expect(await codeOf(write(volume, { path: "/d", content: "x" }))).toBe("INVALID_ARGUMENT");
        await put("/f", "file");
        expect(await codeOf(write(volume, { path: "/f/x", content: "x" }))).toBe("INVALID_PATH");
      });

      it("checks expected_sha256: CONFLICT when the file changed, nothing written", async () => {
        await put("/a.txt", "v1");
        await write(volume, { path: "/a.txt", content: "v2", expected_sha256: sha256("v1") });
        const err = await failure(write(volume, { path: "/a.txt", content: "v3", expected_sha256: sha256("v1") }));
        expect(err.code).toBe("CONFLICT");
        expect(err.message).toMatch(/changed since you read it/);
        expect(await cat("/a.txt")).toBe("v2");
      });
    });

    describe("create_exclusive", () => {
      it("creates a file only where nothing exists", async () => {
        const r = await createExclusive(volume, { path: "/locks/job.lock", content: "me" });
        expect(r).toMatchObject({ path: "/locks/job.lock", kind: "file", size: 2, sha256: sha256("me") });
        const err = await failure(createExclusive(volume, { path: "/locks/job.lock", content: "you" }));
        expect(err.code).toBe("ALREADY_EXISTS");
        expect(err.message).toContain("/locks/job.lock");
        expect(await cat("/locks/job.lock")).toBe("me");
        await mkdir(volume, { path: "/dir" });
        expect(await codeOf(createExclusive(volume, { path: "/dir", content: "x" }))).toBe("ALREADY_EXISTS");
      });

      it("lets exactly one of many racing creators win, with its content", async () => {
        const racers = Array.from({ length: 12 }, (_, i) => `creator ${i}\n`.repeat(100));
        const outcomes = await Promise.allSettled(
          racers.map((content) => createExclusive(volume, { path: "/claim", content })),
        );
        const won = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []));
        expect(won).toHaveLength(1);
        for (const o of outcomes) {
          if (o.status === "rejected") expect((o.reason as { code: string }).code).toBe("ALREADY_EXISTS");
        }
        expect(await cat("/claim")).toBe(racers[won[0] as number]);
      });
    });

    describe("replace", () => {
      it("replaces exactly one occurrence and reports replacements", async () => {
        await put("/m.go", "func a() {\n\treturn 1\n}\n");
        const r = await replace(volume, { path: "/m.go", old: "return 1", new: "return 2" });
        expect(r).toMatchObject({ path: "/m.go", kind: "file", replacements: 1 });
        expect(r.sha256).toBe(sha256("func a() {\n\treturn 2\n}\n"));
        expect(await cat("/m.go")).toBe("func a() {\n\treturn 2\n}\n");
      });

      it("says NOT_FOUND with a hint when old is not there", async () => {
        await put("/m.go", "func a() {\n\treturn 1\n}\n");
        const err = await failure(replace(volume, { path: "/m.go", old: "retrun 1", new: "x" }));
        expect(err.code).toBe("NOT_FOUND");
        expect(err.message).toMatch(/old text not found/);
        expect(err.message).toMatch(/line 2/);
        const ws = await failure(replace(volume, { path: "/m.go", old: "func a() {\n  return 1", new: "x" }));
        expect(ws.message).toMatch(/lines 1-2 match old except for whitespace/);
      });

      it("refuses an ambiguous match, saying how many and where", async () => {
        await put("/r.txt", "x = 1\ny = 2\nx = 1\n");
        const err = await failure(replace(volume, { path: "/r.txt", old: "x = 1", new: "x = 3" }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/2 times \(lines 1, 3\)/);
        expect(err.message).toMatch(/context_before|start_line|all/);
        expect(await cat("/r.txt")).toBe("x = 1\ny = 2\nx = 1\n");
      });

      it("narrows with start_line, context_before and context_after", async () => {
        await put("/r.txt", "x = 1\ny = 2\nx = 1\nz\n");
        await replace(volume, { path: "/r.txt", old: "x = 1", new: "A", start_line: 3 });
        expect(await cat("/r.txt")).toBe("x = 1\ny = 2\nA\nz\n");
        await put("/r.txt", "x = 1\ny = 2\nx = 1\nz\n");
        await replace(volume, { path: "/r.txt", old: "x = 1", new: "B", context_before: "y = 2\n" });
        expect(await cat("/r.txt")).toBe("x = 1\ny = 2\nB\nz\n");
        await put("/r.txt", "x = 1\ny = 2\nx = 1\nz\n");
        await replace(volume, { path: "/r.txt", old: "x = 1", new: "C", context_after: "\ny" });
        expect(await cat("/r.txt")).toBe("C\ny = 2\nx = 1\nz\n");
        const none = await failure(replace(volume, { path: "/r.txt", old: "x = 1", new: "D", start_line: 2 }));
        expect(none.code).toBe("NOT_FOUND");
      });

      it("replaces all occurrences with all=true, but not together with constraints", async () => {
        await put("/r.txt", "a a a\n");
        const r = await replace(volume, { path: "/r.txt", old: "a", new: "b", all: true });
        expect(r.replacements).toBe(3);
        expect(await cat("/r.txt")).toBe("b b b\n");
        expect(await codeOf(replace(volume, { path: "/r.txt", old: "b", new: "c", all: true, start_line: 1 }))).toBe(
          "INVALID_ARGUMENT",
        );
      });

      it("checks expected_occurrences against the real count", async () => {
        await put("/r.txt", "a a a\n");
        const err = await failure(replace(volume, { path: "/r.txt", old: "a", new: "b", expected_occurrences: 2 }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/3 times/);
        const r = await replace(volume, { path: "/r.txt", old: "a", new: "b", expected_occurrences: 3 });
        expect(r.replacements).toBe(3);
      });

      it("refuses an empty old", async () => {
        await put("/r.txt", "a\n");
        expect(replaceArgs.safeParse({ path: "/r.txt", old: "", new: "x" }).success).toBe(false);
        expect(await codeOf(replace(volume, { path: "/r.txt", old: "", new: "x" }))).toBe("INVALID_ARGUMENT");
      });

      it("matches \\n text in a CRLF file and keeps it CRLF with its BOM", async () => {
        await put("/w.txt", "\uFEFFfirst\r\nsecond\r\nthird\r\n");
        await replace(volume, { path: "/w.txt", old: "first\nsecond", new: "1st\n2nd\n2.5" });
        expect(await cat("/w.txt")).toBe("\uFEFF1st\r\n2nd\r\n2.5\r\nthird\r\n");
      });

      it("checks expected_sha256 and refuses binary files", async () => {
        await put("/r.txt", "a\n");
        const err = await failure(
          replace(volume, { path: "/r.txt", old: "a", new: "b", expected_sha256: sha256("zzz") }),
        );
        expect(err.code).toBe("CONFLICT");
        expect(err.message).toMatch(/changed since you read it/);
        await replace(volume, { path: "/r.txt", old: "a", new: "b", expected_sha256: sha256("a\n") });
        expect(await cat("/r.txt")).toBe("b\n");
        await put("/b.bin", Buffer.from([0, 1, 2]));
        expect(await codeOf(replace(volume, { path: "/b.bin", old: "x", new: "y" }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(replace(volume, { path: "/none", old: "x", new: "y" }))).toBe("NOT_FOUND");
      });

      it("loses no update when many replaces run at once", async () => {
        await put("/log.txt", "END\n");
        const n = 25;
        await Promise.all(
          Array.from({ length: n }, (_, i) =>
            replace(volume, { path: "/log.txt", old: "END\n", new: `entry ${i}\nEND\n` }),
          ),
        );
        const body = await cat("/log.txt");
        for (let i = 0; i < n; i++) expect(body).toContain(`entry ${i}\n`);
        expect(body.split("\n").filter(Boolean)).toHaveLength(n + 1);
      });
    });

    describe("insert", () => {
      it("inserts after a line, at the beginning (0) and at the end (-1)", async () => {
        await put("/f.txt", "a\nb\n");
        await insert(volume, { path: "/f.txt", line: 1, content: "x" });
        expect(await cat("/f.txt")).toBe("a\nx\nb\n");
        await insert(volume, { path: "/f.txt", line: 0, content: "top\n" });
        await insert(volume, { path: "/f.txt", line: -1, content: "end1\nend2\n" });
        expect(await cat("/f.txt")).toBe("top\na\nx\nb\nend1\nend2\n");
        const r = await insert(volume, { path: "/f.txt", line: 6, content: "last" });
        expect(r).toMatchObject({ path: "/f.txt", kind: "file", sha256: sha256("top\na\nx\nb\nend1\nend2\nlast\n") });
      });

      it("refuses a line past the end with INVALID_ARGUMENT", async () => {
        await put("/f.txt", "a\nb\n");
        const err = await failure(insert(volume, { path: "/f.txt", line: 3, content: "x" }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/2 lines/);
        expect(await codeOf(insert(volume, { path: "/f.txt", line: 0, content: "" }))).toBe("INVALID_ARGUMENT");
      });

      it("keeps a missing final newline, adding one between at the end", async () => {
        await put("/f.txt", "a\nb");
        await insert(volume, { path: "/f.txt", line: -1, content: "c\n" });
        expect(await cat("/f.txt")).toBe("a\nb\nc");
        await insert(volume, { path: "/f.txt", line: 1, content: "mid" });
        expect(await cat("/f.txt")).toBe("a\nmid\nb\nc");
        await put("/e.txt", "");
        await insert(volume, { path: "/e.txt", line: -1, content: "only\n" });
        expect(await cat("/e.txt")).toBe("only\n");
      });

      it("inserts into a CRLF file with CRLF", async () => {
        await put("/w.txt", "a\r\nb\r\n");
        await insert(volume, { path: "/w.txt", line: 1, content: "x\ny\n" });
        expect(await cat("/w.txt")).toBe("a\r\nx\r\ny\r\nb\r\n");
      });

      it("checks expected_sha256", async () => {
        await put("/f.txt", "a\n");
        expect(
          await codeOf(insert(volume, { path: "/f.txt", line: 0, content: "x", expected_sha256: sha256("b\n") })),
        ).toBe("CONFLICT");
        expect(await cat("/f.txt")).toBe("a\n");
      });
    });

    describe("delete_lines", () => {
      it("deletes an inclusive range and reports deleted_lines", async () => {
        await put("/f.txt", "1\n2\n3\n4\n5\n");
        const r = await deleteLines(volume, { path: "/f.txt", start: 2, end: 3 });
        expect(r).toMatchObject({ path: "/f.txt", kind: "file", deleted_lines: 2, sha256: sha256("1\n4\n5\n") });
        await deleteLines(volume, { path: "/f.txt", start: 2, end: -1 });
        expect(await cat("/f.txt")).toBe("1\n");
      });

      it("keeps a missing final newline and CRLF endings", async () => {
        await put("/f.txt", "a\nb\nc");
        await deleteLines(volume, { path: "/f.txt", start: 3, end: 3 });
        expect(await cat("/f.txt")).toBe("a\nb");
        await put("/w.txt", "a\r\nb\r\nc\r\n");
        await deleteLines(volume, { path: "/w.txt", start: 1, end: 1 });
        expect(await cat("/w.txt")).toBe("b\r\nc\r\n");
      });

      it("refuses ranges outside the file", async () => {
        await put("/f.txt", "a\nb\n");
        expect(await codeOf(deleteLines(volume, { path: "/f.txt", start: 3, end: 3 }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(deleteLines(volume, { path: "/f.txt", start: 1, end: 5 }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(deleteLines(volume, { path: "/f.txt", start: 2, end: 1 }))).toBe("INVALID_ARGUMENT");
        expect(
          await codeOf(deleteLines(volume, { path: "/f.txt", start: 1, end: 1, expected_sha256: sha256("") })),
        ).toBe("CONFLICT");
        expect(await cat("/f.txt")).toBe("a\nb\n");
      });
    });

    describe("patch", () => {
      const start = "one\ntwo\nthree\nfour\nfive\n";

      it("applies patches in order against the patched text", async () => {
        await put("/p.txt", start);
        const r = await patch(volume, {
          path: "/p.txt",
          patches: [
            { op: "insert", start_line: 0, new: "zero\n" },
            { op: "replace", start_line: 2, end_line: 3, new: "ONE\nTWO\n" }, // lines as shifted by the insert
            { op: "delete", old: "four\n" },
            { op: "replace", old: "five", new: "5", context_before: "three\n" },
            { op: "insert", start_line: -1, new: "six" },
          ],
        });
        const want = "zero\nONE\nTWO\nthree\n5\nsix\n";
        expect(await cat("/p.txt")).toBe(want);
        expect(r).toMatchObject({ path: "/p.txt", kind: "file", patches_applied: 5, sha256: sha256(want) });
      });

      it("is all or nothing: a failing patch leaves the file untouched and names itself", async () => {
        await put("/p.txt", start);
        const err = await failure(
          patch(volume, {
            path: "/p.txt",
            patches: [
              { op: "delete", start_line: 1 },
              { op: "replace", old: "nope", new: "x" },
            ],
          }),
        );
        expect(err.code).toBe("NOT_FOUND");
        expect(err.message).toMatch(/patch 2 of 2/);
        expect(await cat("/p.txt")).toBe(start);
      });

      it("checks old against a line range: CONFLICT when those lines changed", async () => {
        await put("/p.txt", start);
        const err = await failure(
          patch(volume, {
            path: "/p.txt",
            patches: [{ op: "replace", start_line: 3, end_line: 4, old: "two\nthree", new: "x" }],
          }),
        );
        expect(err.code).toBe("CONFLICT");
        expect(err.message).toMatch(/lines 3-4 no longer contain the expected text/);
        await patch(volume, {
          path: "/p.txt",
          patches: [{ op: "delete", start_line: 3, end_line: 4, old: "three\nfour\n" }],
        });
        expect(await cat("/p.txt")).toBe("one\ntwo\nfive\n");
      });

      it("uses start_line with old to pick an occurrence, and refuses ambiguity", async () => {
        await put("/p.txt", "x\ny\nx\n");
        await patch(volume, { path: "/p.txt", patches: [{ op: "replace", old: "x", new: "X", start_line: 3 }] });
        expect(await cat("/p.txt")).toBe("x\ny\nX\n");
        await put("/p.txt", "x\ny\nx\n");
        expect(await codeOf(patch(volume, { path: "/p.txt", patches: [{ op: "delete", old: "x" }] }))).toBe(
          "INVALID_ARGUMENT",
        );
      });

      it("refuses malformed patches and out-of-range lines", async () => {
        await put("/p.txt", start);
        const bad = [
          { op: "replace" as const, new: "x" }, // neither old nor start_line
          { op: "insert" as const, start_line: 1 }, // nothing to insert
          { op: "insert" as const, start_line: 9, new: "x" }, // past the end
          { op: "delete" as const, start_line: 6 }, // past the end
          { op: "replace" as const, start_line: 1, new: "x", context_before: "y" }, // context with a range
        ];
        for (const p of bad) {
          expect(await codeOf(patch(volume, { path: "/p.txt", patches: [p] }))).toBe("INVALID_ARGUMENT");
        }
        expect(await cat("/p.txt")).toBe(start);
      });

      it("keeps CRLF, and checks expected_sha256", async () => {
        await put("/w.txt", "a\r\nb\r\n");
        await patch(volume, {
          path: "/w.txt",
          expected_sha256: sha256("a\r\nb\r\n"),
          patches: [{ op: "replace", old: "a\nb", new: "c\nd" }],
        });
        expect(await cat("/w.txt")).toBe("c\r\nd\r\n");
        expect(
          await codeOf(
            patch(volume, {
              path: "/w.txt",
              expected_sha256: sha256("a\r\nb\r\n"),
              patches: [{ op: "delete", start_line: 1 }],
            }),
          ),
        ).toBe("CONFLICT");
      });
    });

    describe("delete", () => {
      it("deletes a file", async () => {
        await put("/a.txt", "x");
        const r = await remove(volume, { path: "/a.txt" });
        expect(r).toMatchObject({ path: "/a.txt", kind: "deleted", sha256: null });
        expect(await volume.stat("/a.txt")).toBeNull();
        expect(await codeOf(remove(volume, { path: "/a.txt" }))).toBe("NOT_FOUND");
      });

      it("needs recursive for a non-empty directory", async () => {
        await mkdir(volume, { path: "/empty" });
        await remove(volume, { path: "/empty" });
        expect(await volume.stat("/empty")).toBeNull();
        await put("/full/deep/x.txt", "x");
        const err = await failure(remove(volume, { path: "/full" }));
        expect(err.code).toBe("INVALID_ARGUMENT");
        expect(err.message).toMatch(/recursive/);
        await remove(volume, { path: "/full", recursive: true });
        expect(await volume.stat("/full")).toBeNull();
      });

      it("refuses to delete /", async () => {
        expect(await codeOf(remove(volume, { path: "/" }))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(remove(volume, { path: "/a/.." }))).toBe("INVALID_ARGUMENT");
      });
    });

    describe("mkdir", () => {
      it("creates parents, accepts an existing directory, refuses a file in the way", async () => {
        const r = await mkdir(volume, { path: "/a/b/c" });
        expect(r).toMatchObject({ path: "/a/b/c", kind: "dir" });
        expect((await volume.stat("/a/b"))?.kind).toBe("dir");
        await mkdir(volume, { path: "/a/b/c" });
        await put("/f", "x");
        expect(await codeOf(mkdir(volume, { path: "/f" }))).toBe("ALREADY_EXISTS");
      });
    });

    describe("rename", () => {
      it("moves a file, creating the target's parents", async () => {
        await put("/a.txt", "A");
        const r = await rename(volume, { path: "/a.txt", new_path: "/x/y/b.txt" });
        expect(r).toMatchObject({ path: "/x/y/b.txt", kind: "file", size: 1, sha256: sha256("A") });
        expect(await volume.stat("/a.txt")).toBeNull();
        expect(await cat("/x/y/b.txt")).toBe("A");
      });

      it("refuses an existing target unless overwrite, and never replaces a directory", async () => {
        await put("/a.txt", "A");
        await put("/b.txt", "B");
        const err = await failure(rename(volume, { path: "/a.txt", new_path: "/b.txt" }));
        expect(err.code).toBe("ALREADY_EXISTS");
        expect(await cat("/a.txt")).toBe("A");
        expect(await cat("/b.txt")).toBe("B");
        await rename(volume, { path: "/a.txt", new_path: "/b.txt", overwrite: true });
        expect(await cat("/b.txt")).toBe("A");
        expect(await volume.stat("/a.txt")).toBeNull();
        await mkdir(volume, { path: "/d" });
        expect(await codeOf(rename(volume, { path: "/b.txt", new_path: "/d", overwrite: true }))).toBe(
          "ALREADY_EXISTS",
        );
        expect(await cat("/b.txt")).toBe("A");
      });

      it("moves a directory with its contents, but never into itself", async () => {
        await put("/src/a/1.txt", "1");
        await put("/src/2.txt", "2");
        await rename(volume, { path: "/src", new_path: "/lib" });
        expect(await cat("/lib/a/1.txt")).toBe("1");
        expect(await cat("/lib/2.txt")).toBe("2");
        expect(await volume.stat("/src")).toBeNull();
        expect(await codeOf(rename(volume, { path: "/lib", new_path: "/lib/a/inner" }))).toBe("INVALID_ARGUMENT");
        expect(await cat("/lib/a/1.txt")).toBe("1");
      });

      it("reports a missing source and refuses /", async () => {
        expect(await codeOf(rename(volume, { path: "/none", new_path: "/x" }))).toBe("NOT_FOUND");
        expect(await codeOf(rename(volume, { path: "/", new_path: "/x" }))).toBe("INVALID_ARGUMENT");
      });
    });

    it("every mutation advances the revision", async () => {
      const revisions = [
        (await write(volume, { path: "/r/a.txt", content: "a\n" })).revision,
        (await createExclusive(volume, { path: "/r/b.txt", content: "b\n" })).revision,
        (await replace(volume, { path: "/r/a.txt", old: "a", new: "A" })).revision,
        (await insert(volume, { path: "/r/a.txt", line: -1, content: "x" })).revision,
        (await deleteLines(volume, { path: "/r/a.txt", start: 1, end: 1 })).revision,
        (await patch(volume, { path: "/r/a.txt", patches: [{ op: "insert", start_line: 0, new: "p" }] })).revision,
        (await mkdir(volume, { path: "/r/d" })).revision,
        (await rename(volume, { path: "/r/b.txt", new_path: "/r/d/b.txt" })).revision,
        (await remove(volume, { path: "/r/d", recursive: true })).revision,
      ];
      for (let i = 1; i < revisions.length; i++) {
        expect(revisions[i] as number).toBeGreaterThan(revisions[i - 1] as number);
      }
    });
  });
}
