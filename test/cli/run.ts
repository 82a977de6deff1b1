// Runs the built CLI the way a user types it: `node dist/cli/main.js …` in a temporary AFS_HOME.
// The build happens once (and only when src/ is newer than dist/), serialized across test files.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmdirSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const MAIN = join(ROOT, "dist/cli/main.js");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const t = entry.isDirectory()
      ? newestMtime(path)
      : /\.(ts|tsx|css|html)$/.test(entry.name)
        ? statSync(path).mtimeMs
        : 0;
    newest = Math.max(newest, t);
  }
  return newest;
}

const isStale = (): boolean => {
  try {
    return (
      statSync(MAIN).mtimeMs <
      Math.max(
        newestMtime(join(ROOT, "src")),
        newestMtime(join(ROOT, "console")),
        statSync(join(ROOT, "package.json")).mtimeMs,
      )
    );
  } catch {
    return true;
  }
};

/**
 * tsc emits JavaScript even when some file elsewhere has a type error; type errors fail
 * `npm run build` (the first step of `npm test`), so here they are reported, not fatal.
 */
function build(): void {
  try {
    execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: "pipe" });
  } catch (e) {
    const out = (e as { stdout?: Buffer }).stdout?.toString() ?? String(e);
    console.warn(`tsc reported errors (the CLI tests run the emitted JavaScript anyway):\n${out}`);
  }
}

/** Builds dist/ with tsc unless it is already newer than every source file. */
export function ensureBuilt(): void {
  const lock = join(ROOT, "node_modules/.cache/afs-cli-test-build.lock");
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`could not take the build lock ${lock}; remove it if stale`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (isStale()) build();
  } finally {
    rmdirSync(lock);
  }
}

/** Longer than any one command in the tests takes, far shorter than CI's 90 minutes. */
const RUN_TIMEOUT_MS = 240_000;

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
  raw: Buffer;
}

export interface Cli {
  home: string;
  /** The environment every run gets: this AFS_HOME, no AFS_STORE/AFS_WORKSPACE from outside. */
  env: NodeJS.ProcessEnv;
  /** Runs `afs …args`; `input` is piped to stdin. */
  run(args: readonly string[], options?: { input?: string | Buffer; env?: Record<string, string> }): Run;
  /** Starts `afs …args` without waiting for it; resolves when it exits. */
  start(args: readonly string[], options?: { env?: Record<string, string> }): Promise<Run>;
  /** Runs and expects exit status 0, returning stdout. */
  ok(args: readonly string[], options?: { input?: string | Buffer; env?: Record<string, string> }): string;
  /** Runs with --json appended, expects success, parses stdout. */
  json<T = unknown>(args: readonly string[], options?: { input?: string | Buffer }): T;
  tmp(name: string): string;
  cleanup(): Promise<void>;
}

export async function cli(): Promise<Cli> {
  const base = await mkdtemp(join(tmpdir(), "afs-cli-"));
  const home = join(base, "home");
  const env: NodeJS.ProcessEnv = { ...process.env, AFS_HOME: home, AFS_ACTOR: "tester" };
  for (const key of ["AFS_STORE", "AFS_WORKSPACE", "AFS_DEBUG"]) delete env[key];
  const run: Cli["run"] = (args, options = {}) => {
    const r = spawnSync(process.execPath, [MAIN, ...args], {
      env: { ...env, ...options.env },
      input: options.input ?? "",
      cwd: base,
      maxBuffer: 64 * 1024 * 1024,
      // spawnSync blocks the test's process, so vitest's own timeout cannot end it: a command that
      // never exits (or a process it left holding its stdio) fails here instead of stalling the run.
      timeout: RUN_TIMEOUT_MS,
      killSignal: "SIGKILL",
    });
    if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT") {
      throw new Error(
        `afs ${args.join(" ")} did not finish within ${RUN_TIMEOUT_MS / 1000} s and was killed; its stderr ended: ${r.stderr?.toString().slice(-1000)}`,
      );
    }
    if (r.error) throw r.error;
    return { status: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString(), raw: r.stdout };
  };
  const start: Cli["start"] = (args, options = {}) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [MAIN, ...args], {
        env: { ...env, ...options.env },
        cwd: base,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (c: Buffer) => out.push(c));
      child.stderr.on("data", (c: Buffer) => err.push(c));
      child.on("error", reject);
      child.on("close", (status) => {
        const raw = Buffer.concat(out);
        resolve({ status: status ?? -1, stdout: raw.toString(), stderr: Buffer.concat(err).toString(), raw });
      });
    });
  const ok: Cli["ok"] = (args, options) => {
    const r = run(args, options);
    if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    home,
    env,
    run,
    start,
    ok,
    json: <T>(args: readonly string[], options?: { input?: string | Buffer }) =>
      JSON.parse(ok([...args, "--json"], options)) as T,
    tmp: (name) => join(base, name),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
