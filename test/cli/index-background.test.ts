// A large import has grep's content index built in the background: searches meanwhile give the
// answers a scan gives, `afs index status` shows the builder's progress, its memory does not grow
// with the tree, and afterwards an edit is indexed by itself. Through the built CLI.
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt } from "./run.js";

/** Files in the tree: more than a search indexes itself (AFS_INDEX_SYNC_BLOBS, set low below). */
const FILES = 60_000;
const DIRS = 500;
const NEEDLE = "RARE_NEEDLE_q7z";
/** Every 15,000th file (from 123) holds the needle: 4 files. */
const needlePaths = (): string[] => {
  const out: string[] = [];
  for (let i = 123; i < FILES; i += 15_000) out.push(pathOf(i));
  return out.sort();
};
const pathOf = (i: number): string => `/d${(i % DIRS) % 50}/e${i % DIRS}/f${i}.txt`;

interface Building {
  pid: number;
  done: number;
  total: number;
  indexed: number;
}
interface Status {
  workspaces: { name: string; mapped?: boolean }[];
  text: { texts: number; building?: Building };
}

let afs: Cli;
let tree: string;
const seenBuilders = new Set<number>();

/** The valid maps of contents to paths in the home's index file (a new map would have a new id). */
function mapRows(home: string): unknown[] {
  const db = new Database(join(home, "afs.index.db"), { readonly: true });
  try {
    return db.prepare("SELECT id, hash, generation FROM text_trees WHERE generation >= 0").all();
  } finally {
    db.close();
  }
}

/** A builder's peak resident memory so far (VmHWM), in bytes; 0 once it has gone. */
function peakRss(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  tree = afs.tmp("tree");
  for (let d = 0; d < DIRS; d++) await mkdir(join(tree, `d${d % 50}`, `e${d}`), { recursive: true });
  const writes: Promise<void>[] = [];
  for (let i = 0; i < FILES; i++) {
    const text = `file ${i} holds value ${(i * 7919) % 100_003}\n${i % 15_000 === 123 ? `${NEEDLE}\n` : ""}`;
    writes.push(writeFile(join(tree, pathOf(i)), text));
    if (writes.length >= 256) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
}, 120_000);

afterAll(async () => {
  // A builder left by a failed run is this test's to end.
  for (const pid of seenBuilders) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {}
  }
  await afs?.cleanup();
});

describe("the content index built in the background", () => {
  it("searches stay correct while it builds, status shows progress, then edits are indexed alone", async () => {
    // A low threshold, so that this tree counts as large (the default is 50,000 contents).
    const env = { AFS_INDEX_SYNC_BLOBS: "5000" };
    const run = (args: string[]): string => {
      const r = afs.run(args, { env });
      if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
      return r.stdout;
    };
    const status = (): Status => JSON.parse(run(["index", "status", "--json"])) as Status;
    const grepFiles = (pattern: string): string[] =>
      run(["fs", "grep", "-l", pattern, "--workspace", "big"]).trim().split("\n").filter(Boolean).sort();

    run(["ws", "import", "big", tree]);
    // The import started a builder: searches meanwhile scan what it has not indexed yet.
    let peak = 0;
    let progress: Building[] = [];
    const watch = (s: Status): Status => {
      const b = s.text.building;
      if (b) {
        seenBuilders.add(b.pid);
        progress.push(b);
        peak = Math.max(peak, peakRss(b.pid));
      }
      return s;
    };
    let s = watch(status());
    expect(s.text.building, "a builder runs after a large import").toBeDefined();
    expect(s.text.texts).toBeLessThan(FILES);
    // Correct whatever the builder has done: the planted files, and a literal in every file.
    expect(grepFiles(NEEDLE)).toEqual(needlePaths());
    expect(grepFiles("file 1 holds value 7919")).toEqual([pathOf(1)]);
    expect(run(["fs", "grep", "-c", "holds value", "--workspace", "big"]).trim().split("\n")).toHaveLength(FILES);
    for (const deadline = Date.now() + 120_000; s.text.building; ) {
      if (Date.now() > deadline) throw new Error(`the builder did not finish: ${JSON.stringify(s.text)}`);
      await new Promise((r) => setTimeout(r, 100));
      s = watch(status());
    }
    expect(s.text.texts).toBe(FILES);
    // Progress was written as it went, against the whole tree.
    progress = progress.filter((b) => b.total > 0);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((b) => b.total === FILES && b.done <= FILES)).toBe(true);
    // Its memory is its batch's, not the tree's (the old first search took ~4 KB per file here).
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(250 * 1024 * 1024);
    expect(run(["index", "status"])).toMatch(
      /content index builder: not running\ngrep's path maps: 1\/1 head tree mapped/,
    );
    // It mapped the head tree's contents to paths: the first search after it (a new process)
    // finds its candidates' paths by lookups instead of listing 60,000 files.
    expect(s.workspaces).toEqual([expect.objectContaining({ name: "big", mapped: true })]);
    const maps = (): unknown[] => mapRows(afs.home);
    const written = maps();
    expect(written).toHaveLength(1);

    // Built: the same answers from the index, by that map (the search had no map to write).
    expect(grepFiles(NEEDLE)).toEqual(needlePaths());
    expect(maps()).toEqual(written);
    // An edit is indexed by the next search alone (one content), not by a new builder.
    run(["fs", "write", "/new/edit.txt", "--content", `a fresh ${NEEDLE} line\n`, "--workspace", "big"]);
    expect(grepFiles(NEEDLE)).toEqual([...needlePaths(), "/new/edit.txt"].sort());
    s = status();
    expect(s.text.building).toBeUndefined();
    expect(s.text.texts).toBe(FILES + 1);
  }, 300_000);
});
