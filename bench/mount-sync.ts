// Mounts, two machines on one store (two AFS_HOMEs, each `afs mount` its own background process):
// a save in A's directory → visible to a third process over MCP (`afs mcp`, file_read polled) and
// → written in B's directory, p50/p99; `git checkout` of a branch changing 1,000 files in A →
// converged in B, against `rsync -a --delete` of the same change; mount and unmount times.
// Run: npm run build && node --import tsx bench/mount-sync.ts [--redis] [SAVES] [--files N]
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startRedis } from "../test/helpers/redis-server.js";
import { emitJson, fmtMs, isMain, makeTempDir, percentile, printTable, removeDir } from "./lib.js";
import { CLI, content, fmtMiB, type Machine, mount, peakRss, requireCli, unmount, untilAll } from "./mount-procs.js";

const args = process.argv.slice(2);
const onRedis = args.includes("--redis");
const filesAt = args.indexOf("--files");
const files = filesAt >= 0 ? Number(args[filesAt + 1]) : 1000;
const saves = Number(args.find((a, i) => /^\d+$/.test(a) && args[i - 1] !== "--files") ?? 100);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it holds; the ms since `from`. */
async function until(check: () => Promise<boolean>, from: number, everyMs: number, limitMs = 60_000): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - from;
    if (performance.now() - from > limitMs) throw new Error("the other side never converged");
    await sleep(everyMs);
  }
}

function git(dir: string, ...gitArgs: string[]): void {
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...gitArgs], {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
    stdio: "ignore",
  });
}

const hasRsync = (): boolean => {
  try {
    execFileSync("rsync", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

/** The text of file `i` on branch `branch`: every file differs between the two branches. */
const fileText = (branch: string, i: number): string => `// ${branch}\nexport const v${i} = "${branch}-${i}";\n`;
const filePath = (dir: string, i: number): string => join(dir, "src", `m${i % 10}`, `f${i}.ts`);

async function main(): Promise<void> {
  requireCli();
  const redis = onRedis ? await startRedis() : null;
  const root = await makeTempDir("afs-bench-mount-");
  const store = redis ? `${redis.url}?prefix=mountbench` : `sqlite:${join(root, "store.db")}`;
  const a: Machine = { home: join(root, "a-home"), store };
  const b: Machine = { home: join(root, "b-home"), store };
  const dirA = join(root, "a");
  const dirB = join(root, "b");
  const mounted: { m: Machine; dir: string }[] = [];
  let mcp: Client | null = null;
  try {
    // A git repository with two branches that differ in every one of `files` files.
    for (let i = 0; i < files; i++) {
      await mkdir(join(filePath(dirA, i), ".."), { recursive: true });
      await writeFile(filePath(dirA, i), fileText("main", i));
    }
    git(dirA, "init", "-q", "-b", "main");
    git(dirA, "add", "-A");
    git(dirA, "commit", "-q", "-m", "main");
    git(dirA, "checkout", "-q", "-b", "other");
    for (let i = 0; i < files; i++) await writeFile(filePath(dirA, i), fileText("other", i));
    git(dirA, "commit", "-q", "-am", "other");
    git(dirA, "checkout", "-q", "main");

    const mountA = await mount(a, "bench", dirA);
    mounted.push({ m: a, dir: dirA });
    const mountB = await mount(b, "bench", dirB);
    mounted.push({ m: b, dir: dirB });

    // A third process reading the workspace over MCP, as an agent host would.
    mcp = new Client({ name: "afs-bench", version: "1.0.0" });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, "mcp", "--workspace", "bench"],
        env: { ...process.env, AFS_HOME: join(root, "c-home"), AFS_STORE: store } as Record<string, string>,
        stderr: "ignore",
      }),
    );
    await mcp.listTools();
    const client = mcp;
    const viaMcp = async (text: string): Promise<boolean> => {
      const r = await client.callTool({ name: "file_read", arguments: { path: "/notes.md" } });
      return !r.isError && (r.structuredContent as { content?: string } | undefined)?.content === text;
    };

    const toDir: number[] = [];
    const toMcp: number[] = [];
    for (let i = 0; i < saves; i++) {
      const text = `save ${i}\n`;
      const from = performance.now();
      await writeFile(join(dirA, "notes.md"), text);
      const [d, m] = await Promise.all([
        until(async () => (await content(join(dirB, "notes.md"))) === text, from, 1),
        // A call costs two processes a millisecond or two of CPU: asked back to back, they would
        // slow the syncs being measured.
        until(() => viaMcp(text), from, 5),
      ]);
      toDir.push(d);
      toMcp.push(m);
      // Saves a person makes are apart; back to back they would merge in the debounce.
      await sleep(20);
    }

    // The anchor's starting point: a copy equal to A before the checkout.
    const rsync = hasRsync();
    const copy = join(root, "rsync-copy");
    const rsyncArgs = ["-a", "--delete", "--exclude", ".git", `${dirA}/`, `${copy}/`];
    if (rsync) execFileSync("rsync", rsyncArgs);

    const expected = new Map<string, string>();
    for (let i = 0; i < files; i++) expected.set(filePath(dirB, i), fileText("other", i));
    const from = performance.now();
    git(dirA, "checkout", "-q", "other");
    const checkoutMs = performance.now() - from;
    const converged = await untilAll(expected, from);
    let rsyncMs: number | null = null;
    if (rsync) {
      const r = performance.now();
      execFileSync("rsync", rsyncArgs);
      rsyncMs = performance.now() - r;
    }
    const rssA = peakRss(mountA.pid);
    const rssB = peakRss(mountB.pid);
    await mcp.close();
    mcp = null;
    const unmountA = await unmount(a, dirA);
    const unmountB = await unmount(b, dirB);
    mounted.length = 0;

    const rows = [
      ["save → visible over MCP (file_read in another process), p50", `${fmtMs(percentile(toMcp, 50))} ms`],
      ["save → visible over MCP, p99", `${fmtMs(percentile(toMcp, 99))} ms`],
      ["save → written in the other machine's directory, p50", `${fmtMs(percentile(toDir, 50))} ms`],
      ["save → written in the other machine's directory, p99", `${fmtMs(percentile(toDir, 99))} ms`],
      [
        `git checkout of ${files} changed files → converged in B`,
        `${fmtMs(converged)} ms (checkout ${fmtMs(checkoutMs)} ms)`,
      ],
      [
        `rsync -a --delete of the same change (anchor)`,
        rsyncMs === null ? "rsync not installed (apt-get install -y rsync)" : `${fmtMs(rsyncMs)} ms`,
      ],
      [`afs mount, ${files} files (workspace created from DIR)`, `${fmtMs(mountA.ms)} ms`],
      [`afs mount, ${files} files (empty DIR receives them)`, `${fmtMs(mountB.ms)} ms`],
      ["afs unmount A / B", `${fmtMs(unmountA)} / ${fmtMs(unmountB)} ms`],
      ["peak RSS of the sync processes A / B", `${fmtMiB(rssA)} / ${fmtMiB(rssB)}`],
    ];
    printTable(
      `mounts on ${redis ? "redis" : "sqlite"}: two homes, each afs mount its own process; ${saves} saves`,
      ["measure", "value"],
      rows,
    );
    emitJson("mount-sync", {
      store: redis ? "redis" : "sqlite",
      saves,
      files,
      saveToMcpP50Ms: percentile(toMcp, 50),
      saveToMcpP99Ms: percentile(toMcp, 99),
      saveToDirP50Ms: percentile(toDir, 50),
      saveToDirP99Ms: percentile(toDir, 99),
      checkoutConvergedMs: converged,
      gitCheckoutMs: checkoutMs,
      rsyncMs,
      mountCreateMs: mountA.ms,
      mountReceiveMs: mountB.ms,
      unmountMs: [unmountA, unmountB],
      peakRssBytes: [rssA, rssB],
    });
  } finally {
    await mcp?.close().catch(() => {});
    for (const { m, dir } of mounted) await unmount(m, dir).catch(() => {});
    await redis?.stop();
    await removeDir(root);
  }
}

if (isMain(import.meta.url)) await main();
