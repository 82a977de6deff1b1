// Checkpoint, restore and fork cost against workspace size: the same operations on workspaces of
// 1,000 and 100,000 small files should cost about the same (goal: 100k/1k <= 2, all well under
// 10 ms), because each touches O(changes · depth) trees, never O(files).
// Run: node --import tsx bench/checkpoint-scale.ts [--redis] [SIZE …]   (default sizes 1000 100000)
// --redis runs the same on the Redis store (a redis-server the bench starts on a free port).
import { join } from "node:path";
import { Afs } from "../src/workspace/afs.js";
import { startRedis } from "../test/helpers/redis-server.js";
import { generateSmallFiles } from "./corpus.js";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  removeDir,
  round,
  type Summary,
  summarize,
  timeMs,
} from "./lib.js";

const DEFAULT_SIZES = [1_000, 100_000];
const CHECKPOINTS = 200;
const RESTORES = 200;
const FORKS = 100;
const WARMUP = 5;
const GOAL_RATIO = 2;
const GOAL_MS = 10;

const OPS = ["write", "checkpoint", "restore", "fork"] as const;
type Op = (typeof OPS)[number];

interface SizeResult {
  files: number;
  levels: number;
  deepest: string;
  importMs: number;
  ops: Record<Op, Summary>;
}

/** Where each size's workspace is stored: a fresh SQLite file, or a fresh Redis key prefix. */
type StoreFor = (home: string, files: number) => string;

async function measure(work: string, files: number, storeFor: StoreFor): Promise<SizeResult> {
  const dir = join(work, `files-${files}`);
  const home = join(work, `home-${files}`);
  const tree = generateSmallFiles(dir, files);
  const afs = await Afs.open({ home, store: storeFor(home, files), actor: "bench" });
  try {
    const imported = await timeMs(() => afs.workspaces.import("scale", dir));
    await removeDir(dir);
    const vol = await afs.workspaces.volume("scale");
    let edits = 0;
    const edit = () => vol.writeFile(tree.deepest, Buffer.from(`edit ${edits++}\n`), { op: "write" });
    const samples: Record<Op, number[]> = { write: [], checkpoint: [], restore: [], fork: [] };

    for (let i = 0; i < WARMUP; i++) {
      await edit();
      await afs.checkpoints.create("scale");
    }
    // Checkpoint: one file changed deep in the tree, then fold it into a new checkpoint.
    const names: string[] = [];
    for (let i = 0; i < CHECKPOINTS; i++) {
      samples.write.push((await timeMs(edit)).ms);
      const { ms, value } = await timeMs(() => afs.checkpoints.create("scale"));
      if (!value.created) throw new Error("checkpoint after a change created nothing");
      samples.checkpoint.push(ms);
      names.push(value.checkpoint.name);
    }
    // Restore: clean workspace, alternating between the last two checkpoints (head is the last).
    const pair = names.slice(-2) as [string, string];
    for (let i = 0; i < RESTORES; i++) {
      const { ms, value } = await timeMs(() => afs.checkpoints.restore("scale", pair[i % 2] as string));
      if (value.safety) throw new Error("restore of a clean workspace made a safety checkpoint");
      samples.restore.push(ms);
    }
    // Fork: one file changed (the overlay is folded into the fork's root), then a new workspace.
    for (let i = 0; i < FORKS; i++) {
      await edit();
      samples.fork.push((await timeMs(() => afs.workspaces.fork("scale", `fork-${i}`))).ms);
    }
    return {
      files,
      levels: tree.levels,
      deepest: tree.deepest,
      importMs: imported.ms,
      ops: {
        write: summarize(samples.write),
        checkpoint: summarize(samples.checkpoint),
        restore: summarize(samples.restore),
        fork: summarize(samples.fork),
      },
    };
  } finally {
    await afs.close();
    await removeDir(home);
  }
}

export async function main(sizes: readonly number[] = DEFAULT_SIZES, onRedis = false): Promise<void> {
  const work = await makeTempDir("afs-bench-scale-");
  const redis = onRedis ? await startRedis() : null;
  const storeFor: StoreFor = redis
    ? (_home, files) => `redis://127.0.0.1:${redis.port}/0?prefix=scale${files}`
    : (home) => `sqlite:${join(home, "afs.db")}`;
  console.log(`store: ${redis ? "redis" : "sqlite"}`);
  try {
    const results: SizeResult[] = [];
    for (const files of sizes) {
      const r = await measure(work, files, storeFor);
      console.log(`${files} files (${r.levels} levels, edited ${r.deepest}): imported in ${fmtMs(r.importMs)} ms`);
      results.push(r);
    }
    printTable(
      "per-operation latency (ms)",
      ["files", "op", "n", "p50", "p95", "max"],
      results.flatMap((r) =>
        OPS.map((op) => [r.files, op, r.ops[op].n, fmtMs(r.ops[op].p50), fmtMs(r.ops[op].p95), fmtMs(r.ops[op].max)]),
      ),
    );
    const small = results[0];
    const large = results[results.length - 1];
    const ratios: Record<string, { p50: number; p95: number }> = {};
    if (small && large && small !== large) {
      const rows = OPS.map((op) => {
        const p50 = large.ops[op].p50 / small.ops[op].p50;
        const p95 = large.ops[op].p95 / small.ops[op].p95;
        ratios[op] = { p50: Math.round(p50 * 100) / 100, p95: Math.round(p95 * 100) / 100 };
        const timed = op !== "write";
        const ok = p50 <= GOAL_RATIO && large.ops[op].p95 < GOAL_MS;
        return [op, p50.toFixed(2), p95.toFixed(2), timed ? (ok ? "met" : "MISSED") : "(context)"];
      });
      printTable(
        `ratio ${large.files}/${small.files} (goal: p50 ratio <= ${GOAL_RATIO} and p95 < ${GOAL_MS} ms)`,
        ["op", "p50 ratio", "p95 ratio", "goal"],
        rows,
      );
    }
    emitJson("checkpoint-scale", {
      store: redis ? "redis" : "sqlite",
      sizes: results.map((r) => ({
        files: r.files,
        levels: r.levels,
        import_ms: round(r.importMs),
        ...Object.fromEntries(OPS.map((op) => [op, { p50: round(r.ops[op].p50), p95: round(r.ops[op].p95) }])),
      })),
      ratios,
    });
  } finally {
    await redis?.stop();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const onRedis = args.includes("--redis");
  const sizes = args.filter((a) => a !== "--redis").map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n <= 0)) {
    console.error("usage: node --import tsx bench/checkpoint-scale.ts [--redis] [FILES …]");
    process.exit(2);
  }
  await main(sizes.length > 0 ? sizes : DEFAULT_SIZES, onRedis);
}
