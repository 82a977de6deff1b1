// `afs fs …` end to end: every file command, human and --json output, content from stdin, and the
// failures a user meets (escaping paths, missing files, ambiguous replaces, bad numbers).
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  afs.ok(["ws", "create", "files"]);
  afs.ok(["ws", "use", "files"]);
});
afterAll(() => afs.cleanup());

interface Mutation {
  path: string;
  kind: string;
  size: number;
  sha256: string | null;
  revision: number;
}

const cat = (path: string): string => afs.ok(["fs", "cat", path]);

describe("writing files", () => {
  it("writes from --content and from stdin, byte for byte", () => {
    expect(afs.ok(["fs", "write", "/notes/todo.txt", "--content", "alpha\nbeta\ngamma\n"])).toMatch(
      /^wrote \/notes\/todo.txt \(17 B, sha256 [0-9a-f]{12}\)\n$/,
    );
    expect(cat("/notes/todo.txt")).toBe("alpha\nbeta\ngamma\n");

    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff, 0x0d, 0x0a, 0x1a]);
    const result = afs.json<Mutation>(["fs", "write", "/logo.png"], { input: binary });
    expect(result).toMatchObject({ path: "/logo.png", kind: "file", size: binary.length });
    expect(afs.run(["fs", "cat", "/logo.png"]).raw).toEqual(binary);

    afs.ok(["fs", "write", "/piped.txt"], { input: "from stdin\r\nkeeps CRLF\r\n" });
    expect(cat("/piped.txt")).toBe("from stdin\r\nkeeps CRLF\r\n");
  });

  it("creates a file only when nothing is there", () => {
    expect(afs.ok(["fs", "create", "/lock", "--content", "mine"])).toMatch(/^created \/lock \(4 B/);
    const again = afs.run(["fs", "create", "/lock", "--content", "theirs"]);
    expect(again.status).toBe(4);
    expect(again.stderr).toMatch(/^afs: \/lock already exists.*\[ALREADY_EXISTS\]\n$/);
    expect(cat("/lock")).toBe("mine");
    afs.ok(["fs", "create", "/stdin-lock"], { input: "claimed" });
    expect(cat("/stdin-lock")).toBe("claimed");
  });

  it("refuses a stale --expected-sha256", () => {
    const r = afs.run(["fs", "write", "/lock", "--content", "x", "--expected-sha256", "0".repeat(64)]);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/\[CONFLICT\]\n$/);
    const bad = afs.run(["fs", "write", "/lock", "--content", "x", "--expected-sha256", "abc"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(
      "afs: --expected-sha256: expected_sha256 must be 64 hex digits (the sha256 returned by read or lines) [INVALID_ARGUMENT]\n",
    );
  });
});

describe("reading files", () => {
  it("lists directories as a table or JSON", () => {
    const table = afs.ok(["fs", "ls"]).split("\n");
    expect(table[0]).toMatch(/^KIND\s+SIZE\s+MODIFIED\s+PATH$/);
    expect(table[1]).toMatch(/^dir\s+-\s+.*\/notes\/$/);
    expect(table.some((l) => /^file\s+9\s+.*\/logo\.png$/.test(l))).toBe(true);
    const json = afs.json<{ path: string; items: { path: string }[] }>(["fs", "ls", "/", "--depth", "2"]);
    expect(json.items.map((i) => i.path)).toContain("/notes/todo.txt");
    expect(afs.json<{ items: unknown[] }>(["fs", "ls", "/notes"]).items).toHaveLength(1);
  });

  it("prints lines", () => {
    expect(afs.ok(["fs", "lines", "/notes/todo.txt", "2"])).toBe("beta\ngamma\n");
    expect(afs.ok(["fs", "lines", "/notes/todo.txt", "2", "2"])).toBe("beta\n");
    const json = afs.json<{ start: number; end: number; total_lines: number; content: string }>([
      "fs",
      "lines",
      "/notes/todo.txt",
      "1",
      "-1",
    ]);
    expect(json).toMatchObject({ start: 1, end: 3, total_lines: 3, content: "alpha\nbeta\ngamma\n" });
  });

  it("prints a window of any size as it reads it; --json, one object held whole, is capped at the read limit", () => {
    // 160 KiB: read in pieces (streamed), past the 128 KiB read whole.
    const wide = `${"x".repeat(99)}\n`.repeat(1640);
    afs.ok(["fs", "write", "/wide.txt"], { input: wide });
    const small = { env: { AFS_MAX_READ_BYTES: "1000" } };
    expect(afs.run(["fs", "lines", "/wide.txt", "1"], small).stdout).toBe(wide);
    expect(afs.run(["fs", "lines", "/wide.txt", "3", "12"], small).stdout).toBe(`${"x".repeat(99)}\n`.repeat(10));
    const tooMany = afs.run(["fs", "lines", "/wide.txt", "1", "--json"], small);
    expect(tooMany.status).toBe(6);
    expect(tooMany.stdout).toBe("");
    expect(tooMany.stderr).toBe(
      "afs: lines 1-1640 of /wide.txt come to 164000 bytes, more than the 1000 bytes one answer carries; ask for fewer lines (or print the lines without --json; AFS_MAX_READ_BYTES raises the limit) [QUOTA_EXCEEDED]\n",
    );
    // A small file (read whole) is held to the same limit with --json, and printed whole without.
    expect(
      afs.run(["fs", "lines", "/notes/todo.txt", "1", "--json"], { env: { AFS_MAX_READ_BYTES: "8" } }).status,
    ).toBe(6);
    expect(afs.run(["fs", "lines", "/notes/todo.txt", "1"], { env: { AFS_MAX_READ_BYTES: "8" } }).stdout).toBe(
      "alpha\nbeta\ngamma\n",
    );
    afs.ok(["fs", "rm", "/wide.txt"]);
  });

  it("prints a window's bytes as they are: CRLF kept, a last line without its newline given one, binary refused", () => {
    // Large enough to be streamed, with CRLF endings and no final newline.
    const body = Array.from({ length: 30_000 }, (_, i) => `row ${i} é`).join("\r\n");
    afs.ok(["fs", "write", "/crlf.txt"], { input: body });
    const rows = body.split("\r\n");
    expect(afs.ok(["fs", "lines", "/crlf.txt", "29999"])).toBe(`${rows[29998]}\r\n${rows[29999]}\n`);
    expect(afs.ok(["fs", "lines", "/crlf.txt", "2", "3"])).toBe(`${rows[1]}\r\n${rows[2]}\r\n`);
    expect(afs.ok(["fs", "lines", "/crlf.txt", "1"])).toBe(`${body}\n`);
    expect(afs.ok(["fs", "lines", "/crlf.txt", "40000"])).toBe("");
    // A NUL up front: refused before anything is printed, streamed or not.
    for (const size of [1000, 300_000]) {
      const bin = Buffer.alloc(size, 0x61);
      bin[10] = 0;
      afs.ok(["fs", "write", "/bin.dat"], { input: bin });
      const r = afs.run(["fs", "lines", "/bin.dat", "1"]);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("is a binary file");
    }
    afs.ok(["fs", "rm", "/crlf.txt"]);
    afs.ok(["fs", "rm", "/bin.dat"]);
  });

  it("stops quietly when the reader goes away (| head)", () => {
    afs.ok(["fs", "write", "/big.txt"], { input: "line\n".repeat(200_000) });
    const script = `"${process.execPath}" "${MAIN}" fs cat /big.txt | head -c 5; exit \${PIPESTATUS[0]}`;
    const r = spawnSync("bash", ["-c", script], { env: afs.env });
    expect(r.stdout.toString()).toBe("line\n");
    expect(r.stderr.toString()).toBe("");
    expect(r.status).toBe(0);
    afs.ok(["fs", "rm", "/big.txt"]);
  });

  it("cat --json gives the read result", () => {
    const r = afs.json<{ content: string; encoding: string; sha256: string }>(["fs", "cat", "/notes/todo.txt"]);
    expect(r).toMatchObject({ content: "alpha\nbeta\ngamma\n", encoding: "text" });
    expect(afs.json<{ binary: boolean }>(["fs", "cat", "/logo.png"]).binary).toBe(true);
  });

  it("globs by name and by relative path", () => {
    expect(afs.ok(["fs", "glob", "*.txt"])).toBe("/notes/todo.txt\n/piped.txt\n");
    expect(afs.ok(["fs", "glob", "*.txt", "--path", "/notes"])).toBe("/notes/todo.txt\n");
    expect(afs.ok(["fs", "glob", "notes", "--kind", "dir"])).toBe("/notes\n");
    expect(afs.json<{ count: number }>(["fs", "glob", "**/*.txt"]).count).toBe(2);
  });

  it("greps like ripgrep: path:line:text, and the -l -c -i -w -x -v -m flags", () => {
    afs.ok(["fs", "write", "/src/app.ts", "--content", "const Foo = 1;\nfoo();\nfood();\n// foo\n"]);
    expect(afs.ok(["fs", "grep", "foo", "/src"])).toBe(
      "/src/app.ts:2:foo();\n/src/app.ts:3:food();\n/src/app.ts:4:// foo\n",
    );
    expect(afs.ok(["fs", "grep", "-i", "foo", "/src"]).split("\n")[0]).toBe("/src/app.ts:1:const Foo = 1;");
    expect(afs.ok(["fs", "grep", "-w", "foo", "/src"])).toBe("/src/app.ts:2:foo();\n/src/app.ts:4:// foo\n");
    expect(afs.ok(["fs", "grep", "-x", "foo();"])).toBe("/src/app.ts:2:foo();\n");
    expect(afs.ok(["fs", "grep", "-c", "foo"])).toBe("/src/app.ts:3\n");
    expect(afs.ok(["fs", "grep", "-l", "foo"])).toBe("/src/app.ts\n");
    expect(afs.ok(["fs", "grep", "-l", "-i", "ALPHA"])).toBe("/notes/todo.txt\n");
    expect(afs.ok(["fs", "grep", "-m", "1", "foo"])).toBe("/src/app.ts:2:foo();\n");
    expect(afs.ok(["fs", "grep", "-v", "o", "/src/app.ts"])).toBe("");
    expect(afs.ok(["fs", "grep", "--regexp", "^fo+d?\\(", "/src"])).toBe(
      "/src/app.ts:2:foo();\n/src/app.ts:3:food();\n",
    );
    expect(afs.ok(["fs", "grep", "--glob", "//*"])).toBe("/src/app.ts:4:// foo\n");
    expect(afs.ok(["fs", "grep", "--fixed-strings", "o("])).toBe("/src/app.ts:2:foo();\n");
    // -n / --line-number, as grep and rg take it: the same output, numbers included anyway.
    expect(afs.ok(["fs", "grep", "-n", "foo", "/src"])).toBe(afs.ok(["fs", "grep", "foo", "/src"]));
    expect(afs.ok(["fs", "grep", "--line-number", "-w", "foo", "/src"])).toBe(
      "/src/app.ts:2:foo();\n/src/app.ts:4:// foo\n",
    );
    const json = afs.json<{ mode: string; matches: { path: string; line: number; text: string }[] }>([
      "fs",
      "grep",
      "Foo",
      "--workspace",
      "files",
    ]);
    expect(json).toEqual({ mode: "matches", matches: [{ path: "/src/app.ts", line: 1, text: "const Foo = 1;" }] });
    const both = afs.run(["fs", "grep", "--regexp", "--glob", "x"]);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/^afs: choose one of glob, regexp.*\[INVALID_ARGUMENT\]\n$/);
  });

  it("greps with context (-B/-A, merged like grep), --include/--exclude, and pages with --limit/--cursor", () => {
    afs.ok(["fs", "write", "/ctx/a.txt", "--content", "one\ntwo hit\nthree\nfour hit\nfive\nsix\nseven\nhit eight\n"]);
    afs.ok(["fs", "write", "/ctx/b.md", "--content", "hit in markdown\n"]);
    expect(afs.ok(["fs", "grep", "-B", "1", "-A", "1", "hit", "/ctx/a.txt"])).toBe(
      [
        "/ctx/a.txt-1-one",
        "/ctx/a.txt:2:two hit",
        "/ctx/a.txt-3-three",
        "/ctx/a.txt:4:four hit",
        "/ctx/a.txt-5-five",
        "--",
        "/ctx/a.txt-7-seven",
        "/ctx/a.txt:8:hit eight",
        "",
      ].join("\n"),
    );
    expect(afs.ok(["fs", "grep", "-l", "hit", "/ctx", "--include", "*.md"])).toBe("/ctx/b.md\n");
    expect(afs.ok(["fs", "grep", "-l", "hit", "/ctx", "--exclude", "*.md"])).toBe("/ctx/a.txt\n");
    const first = afs.run(["fs", "grep", "hit", "/ctx", "--limit", "3"]);
    expect(first.stdout).toBe("/ctx/a.txt:2:two hit\n/ctx/a.txt:4:four hit\n/ctx/a.txt:8:hit eight\n");
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1] as string;
    expect(cursor).toBeDefined();
    expect(afs.ok(["fs", "grep", "hit", "/ctx", "--limit", "3", "--cursor", cursor])).toBe(
      "/ctx/b.md:1:hit in markdown\n",
    );
    const page = afs.json<{ truncated?: boolean; cursor?: string; matches: unknown[] }>([
      "fs",
      "grep",
      "hit",
      "/ctx",
      "--limit",
      "1",
    ]);
    expect(page).toMatchObject({ truncated: true, cursor: expect.any(String), matches: [{ line: 2 }] });
  });
});

describe("editing files", () => {
  it("replaces text, refusing an ambiguous match without changing the file", () => {
    afs.ok(["fs", "write", "/r.txt", "--content", "a = 1\nb = 2\na = 1\n"]);
    const r = afs.run(["fs", "replace", "/r.txt", "--old", "a = 1", "--new", "a = 3"]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    // One line saying how many matches and on which lines, with the error code.
    expect(r.stderr).toMatch(/^afs: old text matches 2 times\b[^\n]*\blines 1, 3\b[^\n]*\[INVALID_ARGUMENT\]\n$/);
    expect(cat("/r.txt")).toBe("a = 1\nb = 2\na = 1\n");

    expect(afs.ok(["fs", "replace", "/r.txt", "--old", "a = 1", "--new", "a = 3", "--start-line", "3"])).toMatch(
      /^replaced 1 occurrence in \/r.txt/,
    );
    expect(cat("/r.txt")).toBe("a = 1\nb = 2\na = 3\n");
    afs.ok(["fs", "replace", "/r.txt", "--old", " = ", "--new", ": ", "--all"]);
    expect(cat("/r.txt")).toBe("a: 1\nb: 2\na: 3\n");
    const counted = afs.json<{ replacements: number }>([
      "fs",
      "replace",
      "/r.txt",
      "--old",
      "a:",
      "--new",
      "A:",
      "--expected-occurrences",
      "2",
    ]);
    expect(counted.replacements).toBe(2);
    afs.ok([
      "fs",
      "replace",
      "/r.txt",
      "--old",
      "2",
      "--new",
      "two",
      "--context-before",
      "b: ",
      "--context-after",
      "\n",
    ]);
    expect(cat("/r.txt")).toBe("A: 1\nb: two\nA: 3\n");

    const missing = afs.run(["fs", "replace", "/r.txt", "--old", "nope", "--new", "x"]);
    expect(missing.status).toBe(3);
    const noOld = afs.run(["fs", "replace", "/r.txt", "--new", "x"]);
    expect(noOld.status).toBe(2);
    expect(noOld.stderr).toBe("afs: required option '--old <text>' not specified\n");
  });

  it("inserts and deletes lines", () => {
    afs.ok(["fs", "write", "/l.txt", "--content", "one\nthree\n"]);
    expect(afs.ok(["fs", "insert", "/l.txt", "1", "--content", "two"])).toMatch(/^inserted 1 line into \/l.txt/);
    afs.ok(["fs", "insert", "/l.txt", "-1"], { input: "four\nfive\n" });
    afs.ok(["fs", "insert", "/l.txt", "0", "--content", "zero"]);
    expect(cat("/l.txt")).toBe("zero\none\ntwo\nthree\nfour\nfive\n");
    expect(afs.json<{ deleted_lines: number }>(["fs", "delete-lines", "/l.txt", "5", "-1"]).deleted_lines).toBe(2);
    expect(afs.ok(["fs", "delete-lines", "/l.txt", "1", "1"])).toMatch(/^deleted 1 line from \/l.txt/);
    expect(cat("/l.txt")).toBe("one\ntwo\nthree\n");
  });

  it("applies patches from JSON or @file, all or nothing", async () => {
    const patches = [
      { op: "replace", old: "two", new: "TWO" },
      { op: "insert", start_line: -1, new: "end" },
    ];
    expect(afs.ok(["fs", "patch", "/l.txt", "--patches", JSON.stringify(patches)])).toMatch(
      /^applied 2 patches to \/l.txt/,
    );
    expect(cat("/l.txt")).toBe("one\nTWO\nthree\nend\n");
    const file = afs.tmp("patches.json");
    await writeFile(file, JSON.stringify([{ op: "delete", start_line: 4 }]));
    afs.ok(["fs", "patch", "/l.txt", "--patches", `@${file}`]);
    expect(cat("/l.txt")).toBe("one\nTWO\nthree\n");

    const failing = [
      { op: "replace", old: "one", new: "1" },
      { op: "replace", old: "missing", new: "x" },
    ];
    const r = afs.run(["fs", "patch", "/l.txt", "--patches", JSON.stringify(failing)]);
    expect(r.status).not.toBe(0);
    expect(cat("/l.txt")).toBe("one\nTWO\nthree\n");
    const notJson = afs.run(["fs", "patch", "/l.txt", "--patches", "[{"]);
    expect(notJson.status).toBe(2);
    expect(notJson.stderr).toMatch(/^afs: --patches: not valid JSON .*\[INVALID_ARGUMENT\]\n$/);
  });

  it("makes directories, moves and removes entries", () => {
    expect(afs.ok(["fs", "mkdir", "/a/b/c"])).toBe("created directory /a/b/c\n");
    afs.ok(["fs", "write", "/a/b/c/f.txt", "--content", "f"]);
    expect(afs.ok(["fs", "mv", "/a/b/c/f.txt", "/a/g.txt"])).toBe("moved /a/b/c/f.txt to /a/g.txt\n");
    expect(cat("/a/g.txt")).toBe("f");
    afs.ok(["fs", "write", "/a/h.txt", "--content", "h"]);
    const clash = afs.run(["fs", "mv", "/a/g.txt", "/a/h.txt"]);
    expect(clash.status).toBe(4);
    expect(afs.json<Mutation>(["fs", "mv", "/a/g.txt", "/a/h.txt", "--overwrite"]).path).toBe("/a/h.txt");
    expect(cat("/a/h.txt")).toBe("f");

    const notEmpty = afs.run(["fs", "rm", "/a"]);
    expect(notEmpty.status).toBe(2);
    expect(notEmpty.stderr).toMatch(/\/a is a non-empty directory; pass recursive/);
    expect(afs.ok(["fs", "rm", "/a", "-r"])).toBe("deleted /a\n");
    expect(afs.run(["fs", "ls", "/a"]).status).toBe(3);
    expect(afs.json<Mutation>(["fs", "rm", "/lock"])).toMatchObject({ path: "/lock", kind: "deleted" });
  });
});

describe("bad input", () => {
  it("refuses paths that escape the root", () => {
    for (const args of [
      ["fs", "cat", "../etc/passwd"],
      ["fs", "write", "/a/../../x", "--content", "x"],
      ["fs", "ls", ".."],
    ]) {
      const r = afs.run(args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(/^afs: path ".*" escapes the root "\/" \[INVALID_PATH\]\n$/);
    }
  });

  it("reports a missing file with exit 3 and one line", () => {
    const r = afs.run(["fs", "cat", "/nope.txt"]);
    expect(r).toMatchObject({ status: 3, stdout: "" });
    expect(r.stderr).toBe("afs: /nope.txt does not exist; use list or glob to see what is there [NOT_FOUND]\n");
  });

  it("names the argument when a number is not a number", () => {
    const r = afs.run(["fs", "lines", "/notes/todo.txt", "two"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^afs: <start>: .*number.*\[INVALID_ARGUMENT\]\n$/);
    const depth = afs.run(["fs", "ls", "--depth", "0"]);
    expect(depth.status).toBe(2);
    expect(depth.stderr).toMatch(/^afs: --depth: /);
  });

  it("reports an unknown workspace", () => {
    const r = afs.run(["fs", "ls", "-w", "ghost"]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/ghost.*\[NOT_FOUND\]\n$/);
  });

  it("prints stack traces only with AFS_DEBUG=1", () => {
    expect(afs.run(["fs", "cat", "/nope.txt"]).stderr).not.toContain("    at ");
    const debug = afs.run(["fs", "cat", "/nope.txt"], { env: { AFS_DEBUG: "1" } });
    expect(debug.status).toBe(3);
    expect(debug.stderr).toContain("    at ");
  });
});
