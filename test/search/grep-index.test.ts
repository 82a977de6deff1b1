// grep through the content index: results equal a plain line-by-line scan for random corpora and
// patterns, and the index does each blob's work once (shared across workspaces, edits add one blob).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type GrepArgs, type GrepResult, grep } from "../../src/ops/index.js";
import type { Volume } from "../../src/volume/volume.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { scan } from "../helpers/grep-reference.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

// Words with case partners RE2 folds specially (Kelvin sign, long s), non-ASCII, and CR/tab noise.
const WORDS = [
  "abc",
  "ABC",
  "Abc",
  "abd",
  "xyz",
  "ing",
  "Testing",
  "sing",
  "k",
  "K",
  "\u212a",
  "s",
  "\u017f",
  "é",
  "É",
  "ß",
  "foo_bar",
  "foo",
  "bar",
  " ",
  " ",
  "\t",
  "-",
  ".",
  "ab",
  "\r",
  "zzrare",
  "ZZRARE",
  "日本",
  "\u{1F600}",
  "2024",
  "07",
];

const line = fc.array(fc.constantFrom(...WORDS), { maxLength: 7 }).map((ws) => ws.join(""));
// Now and then a large file (past the byte scan's 64 KiB segments) or one very long line.
const file = fc.record({
  lines: fc.array(line, { maxLength: 8 }),
  repeat: fc.nat(11).map((n) => (n === 0 ? 2500 : 1)),
  longLine: fc.option(line, { freq: 8, nil: undefined }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
  finalNewline: fc.boolean(),
  binary: fc.nat(9).map((n) => n === 0),
});
const corpus = fc.array(
  fc.tuple(fc.constantFrom("/a.txt", "/b.md", "/src/c.ts", "/src/d/e.go", "/z.txt", "/src/é.txt"), file),
  { minLength: 1, maxLength: 6 },
);

const REGEXES = [
  "abc",
  "ab[cd]",
  "(?i)abc",
  "\\bing\\b",
  "[A-Z][a-z]+ing",
  "\\b[A-Z][a-z]+ing\\b",
  "foo_?bar",
  "(foo|bar)+",
  "^abc",
  "abc$",
  "^$",
  "k",
  "\\w+\\s\\w+",
  "zz(rare|RARE)",
  ".*",
  "é+",
  "(?i)é",
  "x?y?z",
  "ab{2}",
  "a.c",
  "日本",
  "(?i:k)\u212a",
  "s{2,}",
  "^\\s*$",
  "\\Qab.\\E",
  "[^a]bc",
  "\\d{4}-\\d\\d",
  "\\d+",
  "\\D\\d",
  "[^\\s]+\\.",
  "\\S\\s\\S",
  "\\W\\w",
  ".\\B",
  "\\B.",
  "é.",
  ".\\b",
  "[a-c]+\\d*",
  "(?:ab|cd)e",
  "ab\\.",
  "x*",
  "[\\t ]b",
  "[^\\n]c",
  "\\s+\\w+ing\\b",
  "a.{1,3}c",
  "[é日]",
  ".\\x{1F600}",
  "\\r",
  "\\s$",
  "Testing|foo",
  "\\\\",
];

const args: fc.Arbitrary<GrepArgs> = fc
  .record({
    kind: fc.constantFrom("fixed", "glob", "regexp"),
    fixed: fc.constantFrom(
      ...WORDS.filter((w) => w.trim() !== "" && w !== "\r"),
      "abc ABC",
      "foo_bar",
      "zzrare",
      "ing",
    ),
    regex: fc.constantFrom(...REGEXES),
    ignore_case: fc.boolean(),
    word_regexp: fc.boolean(),
    line_regexp: fc.nat(3).map((n) => n === 0),
    invert_match: fc.nat(3).map((n) => n === 0),
    output: fc.constantFrom("matches", "matches", "files", "count"),
    max_count: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    context_before: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    context_after: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  })
  .map((r) => {
    const a: GrepArgs = {
      pattern: r.kind === "regexp" ? r.regex : r.kind === "glob" ? `*${r.fixed}*` : r.fixed,
      ignore_case: r.ignore_case,
      invert_match: r.invert_match,
      line_regexp: r.line_regexp,
      max_count: r.max_count,
    };
    if (r.kind === "regexp") a.regexp = true;
    if (r.kind === "glob") a.glob = true;
    else a.word_regexp = r.word_regexp;
    if (r.output === "files") a.files_with_matches = true;
    if (r.output === "count") a.count = true;
    if (r.output === "matches") Object.assign(a, { context_before: r.context_before, context_after: r.context_after });
    return a;
  });

/**
 * Writes `files` in one process (an Afs), searches once there so they are indexed, then runs `fn`
 * in a new one on the same home: what a user's next `afs` command meets.
 */
async function inANewProcess(files: Record<string, Buffer>, fn: (afs: Afs, volume: Volume) => Promise<void>) {
  const { dir, cleanup } = await tempDir("afs-home-");
  try {
    const first = await Afs.open({ home: dir, actor: "test" });
    await first.workspaces.create("w");
    const v = await first.workspaces.volume("w");
    for (const [path, data] of Object.entries(files)) await v.writeFile(path, data, { op: "write" });
    await grep(v, { pattern: "createHash" }, indexesOf(first));
    await first.close();
    const again = await Afs.open({ home: dir, actor: "test" });
    try {
      await fn(again, await again.workspaces.volume("w"));
    } finally {
      await again.close();
    }
  } finally {
    await cleanup();
  }
}

describe("grep through the content index", () => {
  let afs: Afs;
  let cleanup: () => Promise<void>;
  let serial = 0;
  beforeAll(async () => {
    ({ afs, cleanup } = await tempAfs());
  });
  afterAll(() => cleanup());

  it("returns exactly what a full scan returns, for random corpora and patterns (property)", async () => {
    await fc.assert(
      fc.asyncProperty(corpus, fc.array(args, { minLength: 1, maxLength: 6 }), async (files, searches) => {
        const name = `p${serial++}`;
        await afs.workspaces.create(name);
        const volume = await afs.workspaces.volume(name);
        expect(indexesOf(afs).indexes.text).toBeDefined();
        for (const [path, f] of files) {
          const eol = f.crlf ? "\r\n" : "\n";
          const lines = Array.from({ length: f.repeat }, () => f.lines).flat();
          if (f.longLine !== undefined) lines.push(f.longLine.repeat(20_000));
          let text = (f.bom ? "\uFEFF" : "") + lines.join(eol) + (f.finalNewline && lines.length > 0 ? eol : "");
          if (f.binary) text = `${text}\0`;
          await volume.writeFile(path, Buffer.from(text), { op: "write" });
        }
        for (const a of searches) {
          const expected = await scan(volume, a);
          expect(await grep(volume, a, indexesOf(afs))).toEqual(expected);
          expect(await grep(volume, a)).toEqual(expected);
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it("finds lines in any block of a large file, numbered right, with or without a final newline", async () => {
    const volume = await afs.workspaces.volume((await afs.workspaces.create(`big${serial++}`)).name);
    const line = (i: number) => `line ${i} of filler text, function f${i}() { return ${i % 97}; }`;
    for (const [path, eol, final] of [
      ["/lf.js", "\n", true],
      ["/crlf.js", "\r\n", false],
    ] as const) {
      const lines = Array.from({ length: 40_000 }, (_, i) =>
        i % 9973 === 5 ? `${line(i)} createHash("sha256") 2024-01-0${i % 9}` : line(i),
      );
      // One very long line in the middle, as in a minified bundle.
      lines[20_000] = `${"x = 1; ".repeat(40_000)}createHash(long)`;
      await volume.writeFile(path, Buffer.from(lines.join(eol) + (final ? eol : "")), { op: "write" });
    }
    for (const a of [
      { pattern: "createHash" },
      { pattern: "CREATEHASH", ignore_case: true },
      { pattern: "\\d{4}-\\d\\d-\\d\\d", regexp: true },
      { pattern: 'createHash\\((long|"sha256")\\)', regexp: true },
      { pattern: "f39999", count: true },
      { pattern: "createHash", limit: 3 },
    ] as GrepArgs[]) {
      const expected = await scan(volume, a);
      const got = await grep(volume, a, indexesOf(afs));
      if (a.limit) expect(got).toMatchObject({ matches: (expected as { matches: unknown[] }).matches.slice(0, 3) });
      else expect(got).toEqual(expected);
    }
  });

  it("numbers lines right when a line ends exactly where its numbering marks fall (every KiB)", async () => {
    const volume = await afs.workspaces.volume((await afs.workspaces.create(`marks${serial++}`)).name);
    for (const [path, eol] of [
      ["/lf.txt", "\n"],
      ["/crlf.txt", "\r\n"],
    ] as const) {
      // A first line ending at byte 1024, then lines of 1024 bytes with their ending: a line end at every mark.
      const lines = ["a".repeat(1024 - eol.length + 1)];
      for (let i = 0; i < 6; i++) lines.push(`needle ${i} `.padEnd(1024 - eol.length, "."));
      await volume.writeFile(path, Buffer.from(lines.join(eol) + eol), { op: "write" });
    }
    for (const a of [
      { pattern: "needle" },
      { pattern: "needle 3" },
      { pattern: "NEEDLE 5", ignore_case: true },
    ] as GrepArgs[]) {
      expect(await grep(volume, a, indexesOf(afs))).toEqual(await scan(volume, a));
    }
  });

  it("answers a pattern that makes a backtracking engine blow up, in bounded time, exactly", async () => {
    const volume = await afs.workspaces.volume((await afs.workspaces.create(`slow${serial++}`)).name);
    // Every line holds the literal z, and (\w+\s?)+z backtracks exponentially on the a's after it.
    const lines = Array.from({ length: 3000 }, (_, i) => `z${"a".repeat(28)}! ${i % 50 === 0 ? "b z" : ""}`);
    await volume.writeFile("/slow.txt", Buffer.from(lines.join("\n")), { op: "write" });
    const a: GrepArgs = { pattern: "(\\w+\\s?)+z", regexp: true, count: true };
    const started = performance.now();
    expect(await grep(volume, a, indexesOf(afs))).toEqual(await scan(volume, a));
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("indexes identical content once for every workspace, and an edit re-indexes only the new blob", async () => {
    const { afs: home, cleanup: done } = await tempAfs();
    try {
      const index = home.indexes.text;
      await home.workspaces.create("one");
      const one = await home.workspaces.volume("one");
      for (let i = 0; i < 5; i++) {
        await one.writeFile(`/f${i}.txt`, Buffer.from(`file ${i} says needle_${i}\n`), { op: "write" });
      }
      await one.writeFile("/shared.txt", Buffer.from("shared needle_x\n"), { op: "write" });
      await one.writeFile("/bin", Buffer.from([0x6e, 0x65, 0x65, 0x00]), { op: "write" });
      expect(await grep(one, { pattern: "needle_3" }, indexesOf(home))).toMatchObject({
        matches: [{ path: "/f3.txt" }],
      });
      expect(await index.status()).toMatchObject({ texts: 6, binary: 1 });

      // A fork and a second workspace with the same bytes add nothing to index.
      await home.workspaces.fork("one", "two");
      await home.workspaces.create("three");
      const three = await home.workspaces.volume("three");
      await three.writeFile("/elsewhere/copy.txt", Buffer.from("shared needle_x\n"), { op: "write" });
      expect(await grep(await home.workspaces.volume("two"), { pattern: "needle_x" }, indexesOf(home))).toMatchObject({
        matches: [{ path: "/shared.txt" }],
      });
      expect(await grep(three, { pattern: "needle_x" }, indexesOf(home))).toMatchObject({
        matches: [{ path: "/elsewhere/copy.txt" }],
      });
      expect(await index.status()).toMatchObject({ texts: 6, binary: 1 });

      // One edit: one new blob to index, found at once; the old text stays indexed for the fork.
      await one.writeFile("/f2.txt", Buffer.from("file 2 now says fresh_word\n"), { op: "write" });
      expect(await grep(one, { pattern: "fresh_word" }, indexesOf(home))).toMatchObject({
        matches: [{ path: "/f2.txt", line: 1 }],
      });
      expect(await index.status()).toMatchObject({ texts: 7, binary: 1 });
      expect(await grep(one, { pattern: "needle_2" }, indexesOf(home))).toEqual({ mode: "matches", matches: [] });
      expect(await grep(await home.workspaces.volume("two"), { pattern: "needle_2" }, indexesOf(home))).toMatchObject({
        matches: [{ path: "/f2.txt" }],
      });
      expect(await index.status()).toMatchObject({ texts: 7, binary: 1 });
    } finally {
      await done();
    }
  });

  it("a new process searches a recorded tree by its map of contents to paths, as a scan does, and sees edits made since", async () => {
    const { dir, cleanup: done } = await tempDir("afs-home-");
    try {
      let home = await Afs.open({ home: dir, actor: "test" });
      await home.workspaces.create("w");
      let v: Volume = await home.workspaces.volume("w");
      const files: Record<string, string | Buffer> = {
        "/src/a.ts": "const needle = 1;\nzzrare here\n",
        "/src/same.ts": "const needle = 1;\nzzrare here\n",
        "/src/deep/b.ts": "let Needle;\n",
        "/docs/a.md": "a needle in the docs\n",
        "/docs/none.md": "nothing to see\n",
        "/empty.txt": "",
        "/bin.dat": Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x00, 0x01]),
      };
      for (const [path, data] of Object.entries(files)) {
        await v.writeFile(path, Buffer.from(data), { op: "write" });
      }
      await home.checkpoints.create("w", { name: "one" });
      const cases: GrepArgs[] = [
        { pattern: "needle" },
        { pattern: "needle", ignore_case: true, count: true },
        { pattern: "zzrare", files_with_matches: true },
        { pattern: "needle", include: "*.ts" },
        { pattern: "needle", exclude: "src" },
        { pattern: "needle", path: "/src" },
        { pattern: "ne+dle", regexp: true, ignore_case: true },
        { pattern: "needle", limit: 1 },
        { pattern: "absent_word" },
      ];
      // The reference: the same search without the index, which reads every file.
      const same = async (volume: Volume, home: Afs) => {
        for (const a of cases) expect(await grep(volume, a, indexesOf(home))).toEqual(await grep(volume, a));
      };
      const recorded = (home: Afs) =>
        internalsOf(home).searchDb.db.prepare("SELECT hash FROM text_trees").pluck().all() as string[];
      // The first search indexes the tree, lists it, and records its map.
      await same(v, home);
      const root = (await v.storedBase?.("/"))?.tree;
      expect(root).toBeTruthy();
      expect(recorded(home)).toContain(root);
      // The map holds every file but the binary one, by path relative to the tree (the search of
      // /src recorded that subtree's too).
      expect(
        internalsOf(home)
          .searchDb.db.prepare(
            "SELECT path FROM text_tree_files JOIN text_trees t ON t.id = tree WHERE t.hash = ? ORDER BY path",
          )
          .pluck()
          .all(root),
      ).toEqual(["docs/a.md", "docs/none.md", "empty.txt", "src/a.ts", "src/deep/b.ts", "src/same.ts"]);
      await home.close();

      // A new process answers from the map, as a scan does.
      home = await Afs.open({ home: dir, actor: "test" });
      v = await home.workspaces.volume("w");
      await same(v, home);
      // Live edits: the stored tree's map still answers for the paths that did not change; those
      // that did (a new file, a deletion, an edit, a directory renamed) are read live.
      await v.writeFile("/src/new.ts", Buffer.from("zzrare again, needle\n"), { op: "write" });
      await v.remove("/src/a.ts", {});
      await v.writeFile("/docs/none.md", Buffer.from("now a needle\n"), { op: "write" });
      await v.rename("/src/deep", "/moved", {});
      expect(await v.storedBase?.("/")).toEqual({
        tree: root,
        changed: expect.arrayContaining(["/src/new.ts", "/src/a.ts", "/docs/none.md", "/moved", "/src/deep"]),
      });
      await same(v, home);
      expect(await grep(v, { pattern: "zzrare", files_with_matches: true }, indexesOf(home))).toEqual({
        mode: "files",
        files: ["/src/new.ts", "/src/same.ts"],
      });
      // Checkpointed: a new tree, searched by the earlier tree's map and what changed since (see
      // WorkspaceVolume.priorBase), so its first search lists nothing and records no map of its own.
      await home.checkpoints.create("w", { name: "two" });
      await same(v, home);
      const second = (await v.storedBase?.("/"))?.tree;
      expect(second).not.toBe(root);
      expect(recorded(home)).not.toContain(second);
      await home.close();
      home = await Afs.open({ home: dir, actor: "test" });
      v = await home.workspaces.volume("w");
      await same(v, home);
      expect(await grep(v, { pattern: "zzrare", files_with_matches: true }, indexesOf(home))).toEqual({
        mode: "files",
        files: ["/src/new.ts", "/src/same.ts"],
      });
      // Cleared by another process: the maps go with the rows they name, and searches stay right.
      const other = await Afs.open({ home: dir, actor: "test" });
      await other.indexes.text.clear();
      await other.close();
      expect(recorded(home)).toEqual([]);
      await same(v, home);
      await home.close();
    } finally {
      await done();
    }
  });

  it("reuses a clean tree's scope between searches, and still sees every change made since", async () => {
    const { dir, cleanup: done } = await tempDir("afs-home-");
    try {
      const home = await Afs.open({ home: dir, actor: "test" });
      await home.workspaces.create("w");
      const v: Volume = await home.workspaces.volume("w");
      await v.writeFile("/src/a.ts", Buffer.from("const needle = 1;\n"), { op: "write" });
      await v.writeFile("/docs/a.md", Buffer.from("a needle in the docs\n"), { op: "write" });
      await v.writeFile("/src/same.ts", Buffer.from("const needle = 1;\n"), { op: "write" });
      await home.checkpoints.create("w", { name: "one" });
      const paths = async (a: GrepArgs) => {
        const r = await grep(await home.workspaces.volume("w"), { files_with_matches: true, ...a }, indexesOf(home));
        return r.mode === "files" ? r.files : [];
      };
      // A clean tree lists as the same array each time: what the search scope is kept by.
      expect(await v.walkList?.("/")).toBe(await v.walkList?.("/"));
      for (let i = 0; i < 2; i++) {
        expect(await paths({ pattern: "needle" })).toEqual(["/docs/a.md", "/src/a.ts", "/src/same.ts"]);
        expect(await paths({ pattern: "needle", include: "*.ts" })).toEqual(["/src/a.ts", "/src/same.ts"]);
        expect(await paths({ pattern: "needle", exclude: "src" })).toEqual(["/docs/a.md"]);
        expect(await paths({ pattern: "needle", path: "/src" })).toEqual(["/src/a.ts", "/src/same.ts"]);
      }
      // A live change, then the same change checkpointed, then a deletion, then a restore.
      await v.writeFile("/src/b.ts", Buffer.from("let needle;\n"), { op: "write" });
      expect(await paths({ pattern: "needle", include: "*.ts" })).toEqual(["/src/a.ts", "/src/b.ts", "/src/same.ts"]);
      await home.checkpoints.create("w", { name: "two" });
      expect(await paths({ pattern: "needle", include: "*.ts" })).toEqual(["/src/a.ts", "/src/b.ts", "/src/same.ts"]);
      await v.remove("/src/a.ts", {});
      await home.checkpoints.create("w", { name: "three" });
      expect(await paths({ pattern: "needle" })).toEqual(["/docs/a.md", "/src/b.ts", "/src/same.ts"]);
      await home.checkpoints.restore("w", "one");
      expect(await paths({ pattern: "needle" })).toEqual(["/docs/a.md", "/src/a.ts", "/src/same.ts"]);
      // Another process clears the index and indexes other content: ids held here are void.
      const other = await Afs.open({ home: dir, actor: "test" });
      await other.indexes.text.clear();
      await other.workspaces.create("x");
      await (await other.workspaces.volume("x")).writeFile("/x.txt", Buffer.from("not here\n"), { op: "write" });
      expect(await grep(await other.workspaces.volume("x"), { pattern: "here" }, indexesOf(other))).toMatchObject({
        matches: [{ path: "/x.txt" }],
      });
      await other.close();
      expect(await paths({ pattern: "needle" })).toEqual(["/docs/a.md", "/src/a.ts", "/src/same.ts"]);
      expect(await paths({ pattern: "here" })).toEqual([]);
      await home.close();
    } finally {
      await done();
    }
  });

  it("a new process reads only the candidate blocks of large texts, and answers as a full scan", async () => {
    const line = (i: number) => `line ${i} of filler text, function f${i}() { return ${i % 97}; }`;
    const texts: [string, string, number][] = [
      // Several store chunks (4 MiB), hits in a few of them and one on the last line without a final LF.
      ["/big.js", "\n", 160_000],
      // One chunk, read whole; a BOM before the first hit.
      ["/bom.js", "\r\n", 4_000],
    ];
    const files: Record<string, Buffer> = {};
    for (const [path, eol, n] of texts) {
      const lines = Array.from({ length: n }, (_, i) =>
        i % 37_813 === 0 || i === n - 1 ? `${line(i)} createHash("sha256") é` : line(i),
      );
      const body = lines.join(eol);
      files[path] = Buffer.from(path === "/bom.js" ? `\uFEFF${body}${eol}` : body);
    }
    await inANewProcess(files, async (again, w) => {
      const runs = vi.spyOn(again.indexes.text, "runs");
      const searches: GrepArgs[] = [
        { pattern: "createHash" },
        { pattern: "f151250()" },
        { pattern: 'createHash\\("sha\\d+"\\) é', regexp: true },
        { pattern: "createHash", count: true },
        { pattern: "createHash", files_with_matches: true },
        { pattern: "createHash", limit: 2 },
      ];
      const got: GrepResult[] = [];
      for (const a of searches) got.push(await grep(w, a, indexesOf(again)));
      expect(await Promise.all(runs.mock.results.map((r) => r.value))).toContainEqual(expect.any(Array));
      for (const [i, a] of searches.entries()) {
        const expected = await scan(w, a);
        if (a.limit)
          expect(got[i]).toMatchObject({ matches: (expected as { matches: unknown[] }).matches.slice(0, 2) });
        else expect(got[i]).toEqual(expected);
      }
    });
  });

  it("a process that searches again reads blocks again, and keeps the whole text for later, read in the background", async () => {
    const lines = Array.from({ length: 160_000 }, (_, i) =>
      i % 40_000 === 7 ? `line ${i} createHash("sha1") here` : `line ${i} of filler text, function f${i}() {}`,
    );
    await inANewProcess({ "/big.js": Buffer.from(`${lines.join("\n")}\n`) }, async (again, w) => {
      const big = (await w.stat("/big.js"))?.sha256 as string;
      const runs = vi.spyOn(again.indexes.text, "runs");
      const answers: [GrepArgs, GrepResult][] = [];
      for (const a of [{ pattern: "createHash" }, { pattern: "f120007()" }] as GrepArgs[]) {
        answers.push([a, await grep(w, a, indexesOf(again))]);
      }
      // Both searches read their blocks only: the second no longer inflates the whole text first.
      const read = await Promise.all(runs.mock.calls.map(async (c, i) => [c[0], await runs.mock.results[i]?.value]));
      expect(read.filter(([hash]) => hash === big)).toEqual([
        [big, expect.any(Array)],
        [big, expect.any(Array)],
      ]);
      // Asked twice, the text is then read whole in the background, and the next search finds it in memory.
      await again.indexes.text.warmed();
      runs.mockClear();
      const counted = vi.spyOn(again.indexes.text, "countLines");
      const count: GrepArgs = { pattern: "createHash", count: true };
      answers.push([count, await grep(w, count, indexesOf(again))]);
      // (A count of a plain literal asks the index to count it, which finds it cached: no block is read.)
      expect((await Promise.all(runs.mock.results.map((r) => r.value))).filter((r) => r !== null)).toEqual([]);
      expect((await counted.mock.results[0]?.value)?.get(big)).toBe(4);
      for (const [a, got] of answers) expect(got).toEqual(await scan(w, a));
    });
  });

  it("keeps the index on disk: a new process indexes nothing again", async () => {
    const { dir, cleanup: done } = await tempDir("afs-home-");
    try {
      const first = await Afs.open({ home: dir, actor: "test" });
      await first.workspaces.create("w");
      const v = await first.workspaces.volume("w");
      await v.writeFile("/a.txt", Buffer.from("alpha beta gamma\n"), { op: "write" });
      await v.writeFile("/b.txt", Buffer.from("delta epsilon\n"), { op: "write" });
      const hashes: string[] = [];
      for await (const s of v.walk("/")) if (s.sha256) hashes.push(s.sha256);
      expect(await first.indexes.text.build(hashes)).toEqual({ indexed: 2, bytes: 31, skipped: 0 });
      await first.close();
      const again = await Afs.open({ home: dir, actor: "test" });
      expect(await again.indexes.text.build(hashes)).toEqual({ indexed: 0, bytes: 0, skipped: 0 });
      // A cleared index starts again from nothing, and searches still find everything.
      await again.indexes.text.clear();
      expect(await again.indexes.text.status()).toMatchObject({ texts: 0, binary: 0 });
      expect(await grep(await again.workspaces.volume("w"), { pattern: "gamma" }, indexesOf(again))).toMatchObject({
        matches: [{ path: "/a.txt" }],
      });
      expect(await again.indexes.text.status()).toMatchObject({ texts: 2 });
      // Another process clearing and rebuilding reuses row ids: this one must not trust its old ones.
      const other = await Afs.open({ home: dir, actor: "test" });
      await other.indexes.text.clear();
      await other.workspaces.create("x");
      const ox = await other.workspaces.volume("x");
      await ox.writeFile("/zeta.txt", Buffer.from("zeta only here\n"), { op: "write" });
      expect(await grep(ox, { pattern: "zeta" }, indexesOf(other))).toMatchObject({ matches: [{ path: "/zeta.txt" }] });
      await other.close();
      expect(await grep(await again.workspaces.volume("w"), { pattern: "alpha" }, indexesOf(again))).toMatchObject({
        matches: [{ path: "/a.txt" }],
      });
      expect(await grep(await again.workspaces.volume("w"), { pattern: "zeta" }, indexesOf(again))).toEqual({
        mode: "matches",
        matches: [],
      });
      expect(
        await grep(await again.workspaces.volume("w"), { pattern: "EPSILON", ignore_case: true }, indexesOf(again)),
      ).toMatchObject({
        matches: [{ path: "/b.txt", line: 1, text: "delta epsilon" }],
      });
      await again.close();
    } finally {
      await done();
    }
  });

  it("counts as a full scan does, search after search, when the texts read outweigh the text cache", async () => {
    const { dir, cleanup: done } = await tempDir("afs-home-");
    // ~64 KiB of cache for ~200 KiB of candidate texts: each search reads more than it may keep.
    const small = await Afs.open({ home: dir, actor: "test", env: { ...process.env, AFS_TEXT_CACHE_MB: "0.0625" } });
    try {
      await small.workspaces.create("w");
      const volume = await small.workspaces.volume("w");
      const filler = (i: number) => `filler line ${i} with nothing to see`;
      for (let f = 0; f < 40; f++) {
        const eol = f % 3 === 0 ? "\r\n" : "\n";
        // Overlapping and repeated hits on one line count once; lines without one do not count.
        const lines = Array.from({ length: 100 }, (_, i) =>
          (i + f) % 7 === 0 ? `aaaa common common ${i}` : (i + f) % 11 === 0 ? `commo${eol}n split` : filler(i),
        );
        await volume.writeFile(`/d${f % 4}/f${f}.txt`, Buffer.from(lines.join(eol) + (f % 2 ? eol : "")), {
          op: "write",
        });
      }
      // A binary file with the word is left out; a text of many blocks is counted through them all.
      await volume.writeFile("/bin.dat", Buffer.from("common\0common\n"), { op: "write" });
      const big = Array.from({ length: 20_000 }, (_, i) => (i % 1000 === 3 ? `x common ${i}` : filler(i)));
      await volume.writeFile("/big.txt", Buffer.from(big.join("\n")), { op: "write" });
      for (const a of [
        { pattern: "common", count: true },
        { pattern: "aa", count: true },
        { pattern: "common", files_with_matches: true },
        { pattern: "common" },
      ] as GrepArgs[]) {
        const expected = await scan(volume, a);
        for (let round = 0; round < 3; round++) expect(await grep(volume, a, indexesOf(small))).toEqual(expected);
      }
      const counts = await grep(volume, { pattern: "common", count: true }, indexesOf(small));
      expect(counts).toMatchObject({ mode: "counts" });
      expect(counts.mode === "counts" && counts.counts.find((c) => c.path === "/big.txt")?.count).toBe(20);
      expect(counts.mode === "counts" && counts.counts.some((c) => c.path === "/bin.dat")).toBe(false);
    } finally {
      await small.close();
      await done();
    }
  });
});
