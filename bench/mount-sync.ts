// Mounts: save → written in the other machine's directory (two homes on one store), p50/p99, and
// a branch-switch-like change of 1,000 files converging on the other side, against rsync.
// Run: node --import tsx bench/mount-sync.ts [--redis] [SAVES]   (default 100 saves)
import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Mount } from "../src/mounts/mount.js";
import { Afs } from "../src/workspace/afs.js";
import { startRedis } from "../test/helpers/redis-server.js";
import { emitJson, fmtMs, makeTempDir, percentile, printTable, removeDir } from "./lib.js";

const args = process.argv.slice(2);
const onRedis = args.includes("--redis");
const saves = Number(args.find((a) => /^\d+$/.test(a)) ?? 100);

/** Polls (1 ms) until `check` holds; the elapsed ms since `from`. */
async function until(check: () => Promise<boolean>, from: number, limitMs = 60_000): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - from;
    if (performance.now() - from > limitMs) throw new Error("the other side never converged");
    await new Promise((r) => setTimeout(r, 1));
  }
}

const content = (path: string): Promise<string | null> => readFile(path, "utf8").catch(() => null);

async function main(): Promise<void> {
  const redis = onRedis ? await startRedis() : null;
  const root = await makeTempDir("afs-bench-mount-");
  const url = redis ? `${redis.url}?prefix=mountbench` : `sqlite:${join(root, "a-home", "afs.db")}`;
  const a = await Afs.open({ home: join(root, "a-home"), store: url, actor: "a" });
  const b = await Afs.open({ home: join(root, "b-home"), store: url, actor: "b" });
  const dirA = join(root, "a");
  const dirB = join(root, "b");
  try {
    await mkdir(join(dirA, "src"), { recursive: true });
    for (let i = 0; i < 1000; i++) await writeFile(join(dirA, "src", `f${i}.ts`), `export const v = ${i};\n`);
    let t = performance.now();
    const ma = await Mount.start(a, { workspace: "bench", dir: dirA });
    const mountCreate = performance.now() - t;
    t = performance.now();
    const mb = await Mount.start(b, { workspace: "bench", dir: dirB });
    const mountReceive = performance.now() - t;

    const latencies: number[] = [];
    for (let i = 0; i < saves; i++) {
      const text = `save ${i}\n`;
      const from = performance.now();
      await writeFile(join(dirA, "notes.md"), text);
      latencies.push(await until(async () => (await content(join(dirB, "notes.md"))) === text, from));
    }

    // A branch switch: every file rewritten in A, converged in B.
    const from = performance.now();
    for (let i = 0; i < 1000; i++) await writeFile(join(dirA, "src", `f${i}.ts`), `export const v = ${i + 1};\n`);
    const checkout = await until(
      async () => (await content(join(dirB, "src", "f999.ts"))) === "export const v = 1000;\n",
      from,
    );
    const last = join(dirB, "src");
    await until(async () => {
      for (let i = 0; i < 1000; i += 97)
        if ((await content(join(last, `f${i}.ts`))) !== `export const v = ${i + 1};\n`) return false;
      return true;
    }, from);
    const converged = performance.now() - from;
    let rsync: number | null = null;
    try {
      const r = performance.now();
      execFileSync("rsync", ["-a", `${dirA}/src/`, join(root, "rsync-copy")]);
      rsync = performance.now() - r;
    } catch {
      rsync = null; // rsync not installed
    }
    await ma.stop();
    await mb.stop();

    const rows = [
      ["save → written in the other directory, p50", `${fmtMs(percentile(latencies, 50))} ms`],
      ["save → written in the other directory, p99", `${fmtMs(percentile(latencies, 99))} ms`],
      ["1,000 files rewritten → converged", `${fmtMs(converged)} ms (last file at ${fmtMs(checkout)} ms)`],
      ["rsync -a of the same 1,000 files (fresh copy)", rsync === null ? "rsync not installed" : `${fmtMs(rsync)} ms`],
      ["mount 1,000 files (workspace created from DIR)", `${fmtMs(mountCreate)} ms`],
      ["mount 1,000 files (empty DIR receives them)", `${fmtMs(mountReceive)} ms`],
    ];
    printTable(`mounts on ${redis ? "redis" : "sqlite"} (two homes), ${saves} saves`, ["measure", "value"], rows);
    emitJson("mount-sync", {
      store: redis ? "redis" : "sqlite",
      saves,
      saveP50Ms: percentile(latencies, 50),
      saveP99Ms: percentile(latencies, 99),
      checkout1000Ms: converged,
      rsync1000Ms: rsync,
      mountCreate1000Ms: mountCreate,
      mountReceive1000Ms: mountReceive,
    });
  } finally {
    await a.close();
    await b.close();
    await redis?.stop();
    await removeDir(root);
  }
}

await main();
