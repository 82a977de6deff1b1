// Turn-end cost on `afs acp`'s mounted directory: after one file changes on disk, flush the mount
// (the watcher's paths, barrier included, uploaded) and checkpoint. Goal: the same on 1,000 and
// 100,000 files (100k/1k p50 ratio <= 2) and p50 < 50 ms, because the watcher makes a flush
// O(changes). Mounting the directory again (a whole-tree reconcile against the per-path state,
// what a session on a directory mounted before pays at its start) is printed for reference.
// Run: node --import tsx bench/record-checkpoint.ts [FILES …]   (default 1000 100000, plus a copy of node_modules)
import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { SessionMount } from "../src/cli/acp-mount.js";
import { Afs } from "../src/workspace/afs.js";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  summarize,
  timeMs,
} from "./lib.js";

const DEFAULT_SIZES = [1_000, 100_000];
const TURNS = 50;
const REMOUNTS = 3;
const WARMUP = 5;
const GOAL_RATIO = 2;
const GOAL_MS = 50;
/** How many files of node_modules to copy as the tree nobody here wrote. */
const REAL_FILES = 20_000;

interface Tree {
  label: string;
  dir: string;
  files: number;
  /** Files a turn edits (relative paths), taken in turn. */
  edits: string[];
}

/** A source-like tree: 50 files a directory, sizes spread from 200 B to 16 KiB (log-uniform). */
function generate(dir: string, files: number): Tree {
  let seed = files;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const edits: string[] = [];
  for (let i = 0; i < files; i++) {
    const d = Math.floor(i / 50);
    const rel = join(`pkg${d % 20}`, `mod${Math.floor(d / 20) % 10}`, `dir${Math.floor(d / 200)}`, `file${i % 50}.ts`);
    if (i % 50 === 0) mkdirSync(join(dir, rel, ".."), { recursive: true });
    const size = Math.round(200 * 80 ** rand());
    const line = `export const value${i} = "${"x".repeat(40)}";\n`;
    writeFileSync(join(dir, rel), line.repeat(Math.max(1, Math.round(size / line.length))));
    if (i % Math.max(1, Math.floor(files / TURNS)) === 0) edits.push(rel);
  }
  return { label: `generated ${files}`, dir, files, edits };
}

/** A copy of the first packages of this repository's node_modules, up to REAL_FILES files. */
function copyRealTree(dir: string): Tree {
  const source = join(REPO_ROOT, "node_modules");
  let files = 0;
  const edits: string[] = [];
  for (const name of readdirSync(source).sort()) {
    if (files >= REAL_FILES || name.startsWith(".")) continue;
    cpSync(join(source, name), join(dir, name), { recursive: true, verbatimSymlinks: true, dereference: false });
    for (const e of readdirSync(join(dir, name), { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      files++;
      if (e.name.endsWith(".js") && edits.length < TURNS * 4 && files % 7 === 0) {
        edits.push(join(e.parentPath, e.name).slice(dir.length + 1));
      }
    }
  }
  return { label: `node_modules copy`, dir, files, edits };
}

interface Result {
  label: string;
  files: number;
  mountMs: number;
  turn: ReturnType<typeof summarize>;
  remount: ReturnType<typeof summarize>;
}

async function measure(work: string, tree: Tree): Promise<Result> {
  const home = join(work, `home-${tree.files}`);
  const afs = await Afs.open({ home, store: `sqlite:${join(home, "afs.db")}`, actor: "bench" });
  try {
    const opened = await timeMs(() => SessionMount.open(afs, tree.dir, { workspace: "bench" }));
    let session = opened.value;
    let n = 0;
    const change = () => appendFile(join(tree.dir, tree.edits[n++ % tree.edits.length] as string), `// turn ${n}\n`);
    try {
      for (let i = 0; i < WARMUP; i++) {
        await change();
        await session.checkpointTurn();
      }
      const turns: number[] = [];
      for (let i = 0; i < TURNS; i++) {
        await change();
        const { ms, value } = await timeMs(() => session.checkpointTurn());
        if (!value) throw new Error("a turn that changed a file made no checkpoint");
        turns.push(ms);
      }
      const remount: number[] = [];
      for (let i = 0; i < REMOUNTS; i++) {
        await session.close();
        await change();
        const again = await timeMs(() => SessionMount.open(afs, tree.dir, { workspace: "bench" }));
        session = again.value;
        if (!(await session.checkpointTurn())) throw new Error("a change made while unmounted was not uploaded");
        remount.push(again.ms);
      }
      return {
        label: tree.label,
        files: tree.files,
        mountMs: opened.ms,
        turn: summarize(turns),
        remount: summarize(remount),
      };
    } finally {
      await session.close();
    }
  } finally {
    await afs.close();
    await removeDir(home);
  }
}

export async function main(sizes: readonly number[] = DEFAULT_SIZES): Promise<void> {
  const work = await makeTempDir("afs-bench-record-");
  try {
    const results: Result[] = [];
    const trees: (() => Tree)[] = [
      ...sizes.map((files) => () => generate(join(work, `gen-${files}`), files)),
      () => copyRealTree(join(work, "real")),
    ];
    for (const make of trees) {
      const tree = make();
      const r = await measure(work, tree);
      console.log(
        `${r.label}: ${r.files} files, mounted (workspace created from the directory) in ${fmtMs(r.mountMs)} ms`,
      );
      results.push(r);
      await removeDir(tree.dir);
    }
    printTable(
      `turn end after one change: mount flush (watcher paths + barrier) + checkpoint, n=${TURNS}; mounting again for reference (ms)`,
      ["tree", "files", "turn p50", "turn p95", "turn max", "mount again p50"],
      results.map((r) => [
        r.label,
        r.files,
        fmtMs(r.turn.p50),
        fmtMs(r.turn.p95),
        fmtMs(r.turn.max),
        fmtMs(r.remount.p50),
      ]),
    );
    const small = results[0];
    const large = results[sizes.length - 1];
    const ratio = small && large && small !== large ? large.turn.p50 / small.turn.p50 : Number.NaN;
    const worst = Math.max(...results.map((r) => r.turn.p50));
    console.log(
      `\nratio ${large?.files}/${small?.files} p50: ${ratio.toFixed(2)} (goal <= ${GOAL_RATIO}: ${ratio <= GOAL_RATIO ? "met" : "MISSED"}); ` +
        `slowest p50 ${fmtMs(worst)} ms (goal < ${GOAL_MS} ms: ${worst < GOAL_MS ? "met" : "MISSED"})`,
    );
    emitJson("record-checkpoint", {
      trees: results.map((r) => ({
        tree: r.label,
        files: r.files,
        mount_ms: round(r.mountMs),
        turn: { p50: round(r.turn.p50), p95: round(r.turn.p95) },
        mount_again_p50: round(r.remount.p50),
      })),
      ratio_p50: Math.round(ratio * 100) / 100,
    });
  } finally {
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const sizes = process.argv.slice(2).map(Number);
  await main(sizes.length > 0 ? sizes : DEFAULT_SIZES);
}
