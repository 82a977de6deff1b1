// A 1 GiB file saved in one mounted directory arrives byte-exact in the other machine's, each sync
// running as the real background process (`afs mount-run`) whose peak memory (VmHWM) stays bounded:
// the bytes move in chunks, never whole.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, open, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hashFile } from "../../src/workspace/blob-file.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";
import { CLI } from "../process/harness.js";
import { until } from "./helpers.js";

const GiB = 1024 * 1024 * 1024;
const PIECE = 4 * 1024 * 1024;
/** The bound for syncing a 1 GiB file. */
const MAX_RSS_BYTES = 300 * 1024 * 1024;

/** Peak resident memory of a running process, from /proc (Linux). */
const peakRss = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmHWM:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmHWM for process ${pid}`);
  return Number(line[1]) * 1024;
};

/** Writes `size` bytes of distinct, incompressible 4 MiB pieces; returns their SHA-256. */
async function writeBig(path: string, size: number): Promise<string> {
  const base = randomBytes(PIECE);
  const h = createHash("sha256");
  const file = await open(path, "w");
  try {
    for (let at = 0, i = 0; at < size; at += PIECE, i++) {
      base.writeUInt32LE(i, 0);
      await file.write(base, 0, PIECE, at);
      h.update(base);
    }
  } finally {
    await file.close();
  }
  return h.digest("hex");
}

interface Running {
  child: ChildProcess;
  output: () => string;
}

/** `afs mount-run` as `afs mount` starts it; resolves once it says the directory is in step. */
async function mountRun(env: NodeJS.ProcessEnv, workspace: string, dir: string): Promise<Running> {
  const child = spawn(process.execPath, [CLI, "mount-run", workspace, dir], {
    env: { ...process.env, ...env, AFS_DAEMON: "off" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  for (const s of [child.stdout, child.stderr]) s?.on("data", (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", () => out.includes("in step") && resolve());
    child.once("exit", (code) => reject(new Error(`mount-run exited (${code}): ${out}`)));
  });
  return { child, output: () => out };
}

async function stopRun(r: Running): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return;
  const exited = new Promise((resolve) => r.child.once("exit", resolve));
  r.child.kill("SIGTERM");
  await exited;
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName) && process.platform === "linux")(`a 1 GiB file on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    it("syncs to the other machine's directory byte-exact, each sync process under 300 MB", async () => {
      const homes = await Promise.all(["a", "b"].map((n) => tempDir(`afs-home-${n}-`)));
      const dirs = await tempDir("afs-mnt-big-");
      cleanups.push(...homes.map((h) => h.cleanup), dirs.cleanup);
      const store = redis ? redis().url : `sqlite:${join(homes[0]?.dir as string, "afs.db")}`;
      const [aDir, bDir, staging] = ["a", "b", "staging"].map((n) => join(dirs.dir, n)) as [string, string, string];
      await mkdir(staging);
      const workspace = `big-${process.pid}-${storeName}`;
      const env = (home: string) => ({ AFS_HOME: home, AFS_STORE: store });
      const a = await mountRun(env(homes[0]?.dir as string), workspace, aDir);
      cleanups.push(() => stopRun(a));
      const b = await mountRun(env(homes[1]?.dir as string), workspace, bDir);
      cleanups.push(() => stopRun(b));

      // Written beside the directory, then saved into it in one rename (as editors do).
      const hash = await writeBig(join(staging, "big.bin"), GiB);
      const saved = Date.now();
      await rename(join(staging, "big.bin"), join(aDir, "big.bin"));
      // The sync places a file whole (temp file + rename): once its size is right, it is all there.
      await until(
        async () => (await stat(join(bDir, "big.bin")).catch(() => null))?.size === GiB,
        "the file in b's directory",
        120_000,
      );
      const synced = Date.now() - saved;
      expect(await hashFile(join(bDir, "big.bin"))).toBe(hash);

      const [up, down] = [peakRss(a.child.pid as number), peakRss(b.child.pid as number)];
      process.stderr.write(
        `1 GiB sync on ${storeName}: ${(synced / 1000).toFixed(1)} s, peak RSS uploader ${(up / 2 ** 20).toFixed(0)} MB, downloader ${(down / 2 ** 20).toFixed(0)} MB\n`,
      );
      expect(up).toBeLessThan(MAX_RSS_BYTES);
      expect(down).toBeLessThan(MAX_RSS_BYTES);
    }, 180_000);
  });
}
