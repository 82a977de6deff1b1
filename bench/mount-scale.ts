// Mounts at scale, each `afs mount` its own background process (two homes on one store): mount
// time and peak RSS for a generated tree of 100,000 small files (created from DIR, and received
// by an empty DIR on the other machine) and for a copy of this project's node_modules; CPU the
// two running syncs use while idle (no periodic rescans); peak RSS of both syncs moving a 1 GiB file.
// Run: npm run build && node --import tsx bench/mount-scale.ts [--redis] [--files N] [--idle SECONDS]
//      [--big MiB] [--no-node-modules]     (defaults: 100,000 files, 60 s, 1,024 MiB)
import { execFileSync } from "node:child_process";
import { randomFillSync } from "node:crypto";
import { open, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startRedis } from "../test/helpers/redis-server.js";
import { generateSmallFiles } from "./corpus.js";
import { emitJson, fmtMs, isMain, makeTempDir, percentile, printTable, REPO_ROOT, removeDir } from "./lib.js";
import { cpuMs, fmtMiB, type Machine, mount, peakRss, requireCli, unmount, untilAll } from "./mount-procs.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const onRedis = args.includes("--redis");
const files = option("--files", 100_000);
const idleSeconds = option("--idle", 60);
const bigMiB = option("--big", 1024);
const withNodeModules = !args.includes("--no-node-modules");

/** Saves of one file in the big tree, timed until the other side has it. */
const SAVES = 20;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Writes `mib` MiB of incompressible bytes (no two chunks alike) to `path`, 1 MiB at a time. */
async function writeBig(path: string, mib: number): Promise<void> {
  const file = await open(path, "w");
  const buf = Buffer.alloc(1024 * 1024);
  try {
    for (let i = 0; i < mib; i++) await file.write(randomFillSync(buf));
  } finally {
    await file.close();
  }
}

/** Waits until `path` is a file of `size` bytes (the sync writes a temp file and renames it). */
async function untilSize(path: string, size: number, from: number, limitMs = 900_000): Promise<number> {
  for (;;) {
    const s = await stat(path).catch(() => null);
    if (s?.size === size) return performance.now() - from;
    if (performance.now() - from > limitMs) throw new Error(`${path} never arrived`);
    await sleep(50);
  }
}

async function main(): Promise<void> {
  requireCli();
  const redis = onRedis ? await startRedis() : null;
  const root = await makeTempDir("afs-bench-mount-scale-");
  const store = redis ? `${redis.url}?prefix=mountscale` : `sqlite:${join(root, "store.db")}`;
  const a: Machine = { home: join(root, "a-home"), store };
  const b: Machine = { home: join(root, "b-home"), store };
  const mounted: { m: Machine; dir: string }[] = [];
  const mountOn = async (m: Machine, workspace: string, dir: string) => {
    const r = await mount(m, workspace, dir);
    mounted.push({ m, dir });
    return { ...r, rss: peakRss(r.pid) };
  };
  const unmountAll = async (): Promise<number[]> => {
    const times: number[] = [];
    for (const { m, dir } of mounted.splice(0)) times.push(await unmount(m, dir));
    return times;
  };
  const rows: string[][] = [];
  const json: Record<string, unknown> = { store: redis ? "redis" : "sqlite", files, idleSeconds, bigMiB };
  try {
    // The generated tree: created from A's directory, received by B's empty one.
    const tree = join(root, "tree-a");
    const treeB = join(root, "tree-b");
    const info = generateSmallFiles(tree, files);
    const created = await mountOn(a, "tree", tree);
    const received = await mountOn(b, "tree", treeB);
    rows.push([`mount ${files} files, workspace created from DIR`, `${fmtMs(created.ms)} ms`, fmtMiB(created.rss)]);
    rows.push([`mount ${files} files, empty DIR receives them`, `${fmtMs(received.ms)} ms`, fmtMiB(received.rss)]);

    // Changes in the big tree cost what they change: saves of one file, then 1,000 files at once.
    const saves: number[] = [];
    const deep = info.deepest.split("/").slice(1);
    for (let i = 0; i < SAVES; i++) {
      const text = `save ${i}\n`;
      const from = performance.now();
      await writeFile(join(tree, ...deep), text);
      saves.push(await untilAll(new Map([[join(treeB, ...deep), text]]), from, 1));
      await sleep(20);
    }
    const batch = new Map<string, string>();
    const batchFrom = performance.now();
    for (let i = 0; i < Math.min(1000, files); i++) {
      const rel = ["d0", "d0", "d0"].slice(0, info.levels - 1).concat(`d${Math.floor(i / 100)}`, `f${i % 100}.txt`);
      await writeFile(join(tree, ...rel), `changed ${i}\n`);
      batch.set(join(treeB, ...rel), `changed ${i}\n`);
    }
    const batchMs = await untilAll(batch, batchFrom);
    rows.push([
      `save of one file in the ${files}-file tree → in B, p50 / p99`,
      `${fmtMs(percentile(saves, 50))} / ${fmtMs(percentile(saves, 99))} ms`,
      "",
    ]);
    rows.push([`${batch.size} files rewritten in the tree → converged in B`, `${fmtMs(batchMs)} ms`, ""]);

    // Idle: both syncs running, nothing changing (after a moment for the last rounds to end).
    await sleep(3000);
    const before = [cpuMs(created.pid), cpuMs(received.pid)];
    await sleep(idleSeconds * 1000);
    const idle = [cpuMs(created.pid) - (before[0] as number), cpuMs(received.pid) - (before[1] as number)];
    rows.push([`CPU used idle over ${idleSeconds} s (A / B)`, `${idle[0]} / ${idle[1]} ms`, ""]);
    const unmountTree = await unmountAll();
    rows.push([`afs unmount after ${files} files (A / B)`, `${unmountTree.map(fmtMs).join(" / ")} ms`, ""]);
    Object.assign(json, {
      mountCreateMs: created.ms,
      mountReceiveMs: received.ms,
      mountCreateRssBytes: created.rss,
      mountReceiveRssBytes: received.rss,
      treeSaveP50Ms: percentile(saves, 50),
      treeSaveP99Ms: percentile(saves, 99),
      treeBatchFiles: batch.size,
      treeBatchMs: batchMs,
      idleCpuMs: idle,
      unmountMs: unmountTree,
    });

    // A real tree: this project's node_modules, copied (its links kept, nothing followed).
    if (withNodeModules) {
      const nm = join(root, "node_modules");
      execFileSync("cp", ["-a", join(REPO_ROOT, "node_modules"), nm]);
      const count = Number(
        execFileSync("sh", ["-c", `find '${nm}' -type f | wc -l`])
          .toString()
          .trim(),
      );
      const made = await mountOn(a, "nm", nm);
      const got = await mountOn(b, "nm", join(root, "nm-b"));
      await unmountAll();
      rows.push([`mount node_modules (${count} files), created from DIR`, `${fmtMs(made.ms)} ms`, fmtMiB(made.rss)]);
      rows.push([`mount node_modules, empty DIR receives it`, `${fmtMs(got.ms)} ms`, fmtMiB(got.rss)]);
      Object.assign(json, {
        nodeModulesFiles: count,
        nodeModulesCreateMs: made.ms,
        nodeModulesReceiveMs: got.ms,
        nodeModulesRssBytes: [made.rss, got.rss],
      });
    }

    // A large file: fresh sync processes, so their peak RSS is the file's.
    if (bigMiB > 0) {
      const bigA = join(root, "big-a");
      const bigB = join(root, "big-b");
      const ma = await mountOn(a, "big", bigA);
      const mb = await mountOn(b, "big", bigB);
      const staged = join(root, "big.bin");
      await writeBig(staged, bigMiB);
      const from = performance.now();
      await rename(staged, join(bigA, "big.bin"));
      const arrived = await untilSize(join(bigB, "big.bin"), bigMiB * 1024 * 1024, from);
      const same = execFileSync("cmp", [join(bigA, "big.bin"), join(bigB, "big.bin")]).length === 0;
      const rss = [peakRss(ma.pid), peakRss(mb.pid)];
      await unmountAll();
      rows.push([
        `${bigMiB} MiB file saved in A → written in B${same ? "" : " (DIFFERS)"}`,
        `${fmtMs(arrived)} ms`,
        `${fmtMiB(rss[0] as number)} / ${fmtMiB(rss[1] as number)}`,
      ]);
      Object.assign(json, {
        bigArrivedMs: arrived,
        bigIdentical: same,
        bigRssBytes: rss,
        bigBaseRssBytes: [ma.rss, mb.rss],
      });
    }

    printTable(
      `mounts at scale on ${redis ? "redis" : "sqlite"}: two homes, each afs mount its own process`,
      ["measure", "time", "peak RSS (VmHWM)"],
      rows,
    );
    emitJson("mount-scale", json);
  } finally {
    await unmountAll().catch(() => {});
    await redis?.stop();
    await removeDir(root);
  }
}

if (isMain(import.meta.url)) await main();
