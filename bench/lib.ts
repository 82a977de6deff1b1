// Small helpers the benchmarks share: high-resolution timing, percentiles, aligned tables, the
// one JSON line each benchmark ends with, temporary directories, and `afs serve` on a free port.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** Milliseconds taken by `fn`, measured with process.hrtime.bigint. */
export async function timeMs<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

/** Linear-interpolated percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (rank - lo);
}

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  return {
    n: samples.length,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    min: Math.min(...samples),
    max: Math.max(...samples),
  };
}

/** Rounds for display and JSON: three decimals below 10, one above. */
export const round = (ms: number): number =>
  Math.abs(ms) < 10 ? Math.round(ms * 1000) / 1000 : Math.round(ms * 10) / 10;

export const fmtMs = (ms: number): string => (Math.abs(ms) < 10 ? ms.toFixed(3) : ms.toFixed(1));

export function fmtBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}

/** An aligned text table: numbers right-aligned, everything else left-aligned. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((row) => row.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? "").length)));
  const numeric = headers.map((_, i) =>
    rows.every((r) => typeof r[i] === "number" || /^[-\d.,x%]+$/.test(String(r[i]))),
  );
  const line = (row: readonly string[]): string =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

export function printTable(
  title: string,
  headers: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
) {
  console.log(`\n${title}\n${formatTable(headers, rows)}`);
}

/** The single machine-readable line a benchmark ends with (run-all collects these). */
export function emitJson(bench: string, data: Record<string, unknown>): void {
  // Load average says how much else the machine was doing, which is most of the noise in tails.
  const machine = { cpus: cpus().length, node: process.version, load1: Math.round((loadavg()[0] ?? 0) * 100) / 100 };
  console.log(JSON.stringify({ bench, ...data, machine }));
}

/** A fresh temporary directory; remove it with `rm(dir, { recursive: true, force: true })`. */
export const makeTempDir = (prefix: string): Promise<string> => mkdtemp(join(tmpdir(), prefix));

export const removeDir = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });

/** Total size of the regular files under `dir` (for on-disk footprints). */
export async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** True when the module with this import.meta.url is the script node was asked to run. */
export function isMain(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

/** The repository root (bench/ sits directly under it). */
export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** `afs serve --port 0 …args` from the CLI at `cli`; resolves once it prints where it listens. */
export function startServe(
  cli: string,
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [cli, "serve", "--port", "0", ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /listening on (\S+)/.exec(stderr);
      if (found?.[1]) resolve({ url: found[1], child });
    });
    child.once("exit", (code) => reject(new Error(`afs serve exited ${code}: ${stderr}`)));
  });
}

/** An `afs mcp` server over stdio (workspace-ro on `workspace`), with the official SDK's client. */
export interface StdioSession {
  client: Client;
  /** The server process's pid (for reading its memory). */
  pid: number;
  close: () => Promise<void>;
}

/**
 * Starts `afs mcp` from `cli` for `home`, with no AFS_* setting of this process leaking in; `env`
 * adds settings, `nodeArgs` flags for node. Tools are listed first, so the client validates every
 * result against its tool's output schema.
 */
export async function stdioSession(
  cli: string,
  home: string,
  workspace: string,
  options: { env?: Record<string, string>; nodeArgs?: string[]; stderr?: "inherit" | "ignore" } = {},
): Promise<StdioSession> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AFS_")) env[k] = v;
  Object.assign(env, { AFS_HOME: home, AFS_ACTOR: "bench" }, options.env);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...(options.nodeArgs ?? []), cli, "mcp", "--profile", "workspace-ro", "--workspace", workspace],
    env,
    stderr: options.stderr ?? "ignore",
  });
  const client = new Client({ name: "afs-bench", version: "1.0.0" });
  await client.connect(transport);
  await client.listTools();
  if (transport.pid === null) throw new Error("afs mcp did not start");
  return { client, pid: transport.pid, close: () => client.close() };
}

/** One afs CLI process: wall time, and from test/process/max-rss.mjs its peak RSS and CPU time. */
export interface CliRun {
  ms: number;
  /** Peak RSS in bytes (NaN when it could not be read). */
  rss: number;
  /** CPU time, user + system over all threads, in ms (NaN when it could not be read). */
  cpu: number;
  stdout: string;
}

const RSS_PROBE = join(REPO_ROOT, "test/process/max-rss.mjs");

/**
 * Runs the CLI at `main` over home `home` (no resident afs, no background builder of its own, no
 * store or workspace from outside), failing on a non-zero exit.
 */
export function afsCli(main: string, home: string, args: readonly string[], cwd?: string): CliRun {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AFS_HOME: home,
    AFS_ACTOR: "bench",
    AFS_DAEMON: "off",
    AFS_INDEX_BACKGROUND: "off",
  };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE"]) delete env[k];
  const start = performance.now();
  const r = spawnSync(process.execPath, ["--import", RSS_PROBE, main, ...args], { env, cwd, maxBuffer: 1 << 30 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const stderr = r.stderr.toString();
  const kb = /AFS_MAX_RSS_KB=(\d+)/.exec(stderr)?.[1];
  const cpu = Number(/AFS_CPU_MS=(\d+)/.exec(stderr)?.[1] ?? Number.NaN);
  return { ms, rss: kb ? Number(kb) * 1024 : Number.NaN, cpu, stdout: r.stdout.toString() };
}
