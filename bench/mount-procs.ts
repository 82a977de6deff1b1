// What the mount benchmarks share: `afs mount` / `afs unmount` through the built CLI (so the sync
// runs in its own background process, and its memory and CPU are the sync's own), the process's
// peak RSS and CPU time from /proc, and polling until the other side holds what was written.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./lib.js";

export const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");

const run = promisify(execFile);

/** Stops the bench when the CLI is missing: the mounts run as its background processes. */
export function requireCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
}

/** One machine: its home, on the shared store. */
export interface Machine {
  home: string;
  store: string;
}

const envOf = (m: Machine): NodeJS.ProcessEnv => ({ ...process.env, AFS_HOME: m.home, AFS_STORE: m.store });

/** Runs `afs ARGS --json` as machine `m`; its parsed output and wall time. */
export async function afsCli(
  m: Machine,
  args: readonly string[],
): Promise<{ ms: number; out: Record<string, unknown> }> {
  const from = performance.now();
  const { stdout } = await run(process.execPath, [CLI, ...args, "--json"], {
    env: envOf(m),
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ms: performance.now() - from, out: JSON.parse(stdout) as Record<string, unknown> };
}

/** `afs mount WORKSPACE DIR`: returns once both sides hold the same files; the sync process's id. */
export async function mount(m: Machine, workspace: string, dir: string): Promise<{ ms: number; pid: number }> {
  const { ms, out } = await afsCli(m, ["mount", workspace, dir]);
  if (typeof out.pid !== "number") throw new Error(`afs mount printed no pid: ${JSON.stringify(out)}`);
  return { ms, pid: out.pid };
}

/** `afs unmount DIR`: uploads what is pending and stops the sync process. */
export async function unmount(m: Machine, dir: string): Promise<number> {
  return (await afsCli(m, ["unmount", dir])).ms;
}

/** Peak resident memory of a running process (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb ?? Number.NaN) * 1024;
}

/** User + system CPU time a process has used so far, in ms (from /proc/PID/stat). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at state; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/** USER_HZ: 100 on every Linux build that matters here (getconf CLK_TCK). */
const CLOCK_TICKS = 100;

export const fmtMiB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

export const content = (path: string): Promise<string | null> => readFile(path, "utf8").catch(() => null);

/**
 * Polls until every path in `expected` holds its text; the ms since `from`. Each look (every
 * `everyMs`) reads the paths still differing only up to the first that still differs: reading
 * them all each time would take a core from the syncs being measured on a 2-core machine.
 */
export async function untilAll(
  expected: ReadonlyMap<string, string>,
  from: number,
  everyMs = 10,
  limitMs = 600_000,
): Promise<number> {
  const left = [...expected.keys()];
  for (;;) {
    while (left.length > 0 && (await content(left[0] as string)) === expected.get(left[0] as string)) left.shift();
    if (left.length === 0) return performance.now() - from;
    if (performance.now() - from > limitMs) throw new Error(`${left.length} files never converged, e.g. ${left[0]}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
