// History at scale: `file_history` of one path (afs.history.versions, what the MCP tool and
// `afs fs history` call) and `afs log --limit 50` (the engine calls the command makes: the newest 50
// events and their sizes) in workspaces of 1,000 and 100,000 events with 10 and 1,000 checkpoints,
// on SQLite and Redis. Goal (issue 19): p50 <= 20 ms for both at 100,000 events and 1,000 checkpoints.
// Also the `afs log --limit 50` process (startup included) on SQLite, for context.
// Run: node --import tsx bench/history.ts [--sqlite-only] [EVENTS …]   (default 1000 100000)
//
// Workload: 1,000 files in 10 directories; each round changes 100 random files (their events
// committed as one batch through the Store, as 100 writes would record them) and then takes a real
// checkpoint, so every path has its share of versions and checkpoints hold each of them.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { logEntries, recentChanges } from "../src/cli/commands/log.js";
import { sha256 } from "../src/core/hash.js";
import type { EventInput, OverlayRow } from "../src/store/store.js";
import { Afs } from "../src/workspace/afs.js";
import { internalsOf } from "../src/workspace/engine/internals.js";
import { startRedis } from "../test/helpers/redis-server.js";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  percentile,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  timeMs,
} from "./lib.js";

interface Summary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

const summarize = (samples: readonly number[]): Summary => ({
  n: samples.length,
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
  max: Math.max(...samples),
});

const DEFAULT_SIZES = [1_000, 100_000];
const FILES = 1_000;
const PER_ROUND = 100;
const CALLS = 300;
const WS = "hist";

/** A deterministic PRNG (mulberry32), so every run edits the same files. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pathOf = (i: number): string => `/dir${i % 10}/file${i}.txt`;

interface Result {
  store: string;
  events: number;
  checkpoints: number;
  fillMs: number;
  history: Summary;
  log: Summary;
  logProcess?: Summary;
}

/** Fills the workspace; returns how many checkpoints it took and the files it edited. */
async function fill(afs: Afs, events: number): Promise<{ checkpoints: number; edited: number[] }> {
  const { store } = internalsOf(afs);
  await afs.workspaces.create(WS);
  const random = prng(19);
  let revision = 0;
  let n = 0;
  let checkpoints = 0;
  const current = new Map<number, string>();
  while (n < events) {
    const count = Math.min(PER_ROUND, events - n);
    const blobs: { hash: string; data: Buffer }[] = [];
    const set: OverlayRow[] = [];
    const evs: EventInput[] = [];
    for (let k = 0; k < count; k++) {
      const i = Math.floor(random() * FILES);
      const data = Buffer.from(`${pathOf(i)} version ${n + k}\n${"x".repeat(200 + (i % 300))}\n`);
      const hash = sha256(data);
      blobs.push({ hash, data });
      set.push({ path: pathOf(i), entry: { kind: "file", hash, size: data.length, mode: 0o644, mtime: Date.now() } });
      evs.push({
        op: "write",
        path: pathOf(i),
        oldHash: current.get(i) ?? null,
        newHash: hash,
        actor: "bench",
        surface: "mcp",
      });
      current.set(i, hash);
    }
    // Directories the overlay rows sit in, as writes would have created them.
    for (let d = 0; d < 10 && revision === 0; d++) {
      set.unshift({ path: `/dir${d}`, entry: { kind: "dir", hash: EMPTY_TREE_HASH, size: 0, mode: 0o755, mtime: 0 } });
    }
    await store.putBlobs(blobs);
    // The same path twice in a round: the last row wins, as with sequential writes.
    const rows = [...new Map(set.map((r) => [r.path, r])).values()];
    revision = await store.commit(WS, { expectRevision: revision, set: rows, events: evs });
    n += count;
    const cp = await afs.checkpoints.create(WS);
    checkpoints++;
    revision = (await afs.workspaces.get(WS)).revision;
    if (!cp.created) throw new Error("a round changed nothing");
  }
  return { checkpoints, edited: [...current.keys()] };
}

let EMPTY_TREE_HASH = "";

async function measure(storeUrl: string, home: string, events: number, storeName: string): Promise<Result> {
  const afs = await Afs.open({ home, store: storeUrl, actor: "bench", surface: "cli" });
  try {
    const { EMPTY_TREE } = await import("../src/workspace/tree.js");
    EMPTY_TREE_HASH = EMPTY_TREE;
    const filled = await timeMs(() => fill(afs, events));
    const random = prng(7);
    const history: number[] = [];
    const log: number[] = [];
    // Warm-up: open statements, connections.
    for (let i = 0; i < 5; i++) await afs.history.versions(WS, pathOf(i));
    for (let i = 0; i < CALLS; i++) {
      const { edited } = filled.value;
      const path = pathOf(edited[Math.floor(random() * edited.length)] as number);
      const { ms, value } = await timeMs(() => afs.history.versions(WS, path));
      if (value.versions.length === 0) throw new Error(`no history for ${path}`);
      history.push(ms);
      const l = await timeMs(async () => logEntries(afs, await recentChanges(afs, [WS], {}, 50)));
      if (l.value.length !== 50) throw new Error("afs log --limit 50 gave fewer than 50 changes");
      log.push(l.ms);
    }
    const result: Result = {
      store: storeName,
      events,
      checkpoints: filled.value.checkpoints,
      fillMs: filled.ms,
      history: summarize(history),
      log: summarize(log),
    };
    if (storeName === "sqlite") {
      const runs: number[] = [];
      const env = { ...process.env, AFS_HOME: home, AFS_STORE: storeUrl, AFS_DAEMON: "off" };
      for (let i = 0; i < 10; i++) {
        const start = performance.now();
        const r = spawnSync(process.execPath, [join(REPO_ROOT, "dist/cli/main.js"), "log", "-w", WS, "--limit", "50"], {
          env,
          encoding: "utf8",
        });
        if (r.status !== 0) throw new Error(`afs log failed: ${r.stderr}`);
        runs.push(performance.now() - start);
      }
      result.logProcess = summarize(runs);
    }
    return result;
  } finally {
    await afs.close();
  }
}

export async function main(sizes: readonly number[] = DEFAULT_SIZES, sqliteOnly = false): Promise<void> {
  const work = await makeTempDir("afs-bench-history-");
  const redis = sqliteOnly ? null : await startRedis();
  const results: Result[] = [];
  try {
    for (const events of sizes) {
      const home = join(work, `sqlite-${events}`);
      results.push(await measure(`sqlite:${join(home, "afs.db")}`, home, events, "sqlite"));
      if (redis) {
        const rhome = join(work, `redis-${events}`);
        results.push(await measure(`redis://127.0.0.1:${redis.port}/0?prefix=hist${events}`, rhome, events, "redis"));
      }
    }
    printTable(
      "history latency (ms)",
      ["store", "events", "checkpoints", "fill s", "call", "n", "p50", "p99", "max"],
      results.flatMap((r) => [
        [
          r.store,
          r.events,
          r.checkpoints,
          (r.fillMs / 1000).toFixed(1),
          "file_history",
          r.history.n,
          fmtMs(r.history.p50),
          fmtMs(r.history.p99),
          fmtMs(r.history.max),
        ],
        [
          r.store,
          r.events,
          r.checkpoints,
          "",
          "log --limit 50",
          r.log.n,
          fmtMs(r.log.p50),
          fmtMs(r.log.p99),
          fmtMs(r.log.max),
        ],
        ...(r.logProcess
          ? [
              [
                r.store,
                r.events,
                r.checkpoints,
                "",
                "afs log process",
                r.logProcess.n,
                fmtMs(r.logProcess.p50),
                fmtMs(r.logProcess.p99),
                fmtMs(r.logProcess.max),
              ],
            ]
          : []),
      ]),
    );
    emitJson("history", {
      results: results.map((r) => ({
        store: r.store,
        events: r.events,
        checkpoints: r.checkpoints,
        file_history: { p50: round(r.history.p50), p99: round(r.history.p99) },
        log_50: { p50: round(r.log.p50), p99: round(r.log.p99) },
        ...(r.logProcess ? { log_process: { p50: round(r.logProcess.p50), p99: round(r.logProcess.p99) } } : {}),
      })),
    });
  } finally {
    await redis?.stop();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const sqliteOnly = args.includes("--sqlite-only");
  const sizes = args.filter((a) => !a.startsWith("--")).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) {
    console.error("usage: node --import tsx bench/history.ts [--sqlite-only] [EVENTS …]");
    process.exit(2);
  }
  await main(sizes.length > 0 ? sizes : DEFAULT_SIZES, sqliteOnly);
}
