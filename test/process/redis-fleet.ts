// Several built `afs serve` processes over one redis-server, for the multi-process tests of the
// Redis store: the CLI on the same store, serve processes on free ports, bounded concurrency.
import { type ChildProcess, spawn } from "node:child_process";
import { type Cli, cli, ensureBuilt, MAIN } from "../cli/run.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

export interface AfsServe {
  /** The /mcp endpoint. */
  url: string;
  pid: number;
  /** Whether the process still runs. */
  running(): boolean;
  stderr(): string;
  /** SIGTERM, then SIGKILL after 5 s: cleanup never hangs on a stuck server. */
  stop(): Promise<void>;
}

export interface Fleet {
  redis: RedisServer;
  /** The store URL every process here uses. */
  store: string;
  /** The CLI on the store (AFS_STORE set), in its own AFS_HOME. */
  afs(args: readonly string[], input?: string): { status: number; stdout: string; stderr: string };
  /** Runs the CLI and expects success; returns stdout. */
  ok(args: readonly string[], input?: string): string;
  /** Issues a token with the CLI: its id and secret. */
  issue(args: readonly string[]): { id: string; secret: string };
  /** Starts `afs serve --port 0 …args` on the store. */
  serve(args?: readonly string[]): Promise<AfsServe>;
  cleanup(): Promise<void>;
}

/** Builds the CLI if needed, starts a redis-server and an AFS_HOME around it. */
export async function fleet(): Promise<Fleet> {
  ensureBuilt();
  const redis = await startRedis();
  let c: Cli;
  try {
    c = await cli();
  } catch (e) {
    await redis.stop();
    throw e;
  }
  const store = redis.url;
  const served: AfsServe[] = [];
  const afs: Fleet["afs"] = (args, input) => {
    const r = c.run(args, { env: { AFS_STORE: store }, ...(input === undefined ? {} : { input }) });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const ok: Fleet["ok"] = (args, input) => {
    const r = afs(args, input);
    if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  return {
    redis,
    store,
    afs,
    ok,
    issue(args) {
      const out = JSON.parse(ok(["token", "issue", ...args, "--json"])) as { token_id: string; token: string };
      return { id: out.token_id, secret: out.token };
    },
    async serve(args = []) {
      const s = await startServe({ ...c.env, AFS_STORE: store }, args);
      served.push(s);
      return s;
    },
    async cleanup() {
      await Promise.allSettled(served.map((s) => s.stop()));
      await redis.stop();
      await c.cleanup();
    },
  };
}

async function startServe(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<AfsServe> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, "serve", "--port", "0", ...args], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  let exitedWith: string | null = null;
  const exited = new Promise<void>((done) =>
    child.once("exit", (code, signal) => {
      exitedWith = `${code ?? signal}`;
      done();
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`afs serve did not listen within 20 s: ${stderr}`));
    }, 20_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /listening on (\S+)/.exec(stderr);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`afs serve exited ${exitedWith}: ${stderr}`));
    });
  });
  return {
    url,
    pid: child.pid ?? -1,
    running: () => exitedWith === null,
    stderr: () => stderr,
    async stop() {
      if (exitedWith !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in item order. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>) {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
