// A real redis-server for tests: on a free loopback port, with its own temp data directory and
// the durability settings afs expects (AOF, fsync always, no RDB snapshots), stopped afterwards.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const REDIS_SERVER = process.env.AFS_REDIS_SERVER ?? "redis-server";

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  /** Kills the server (SIGKILL by default) keeping its data directory, for fault tests. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Sends a signal and keeps tracking the process (SIGSTOP / SIGCONT to freeze and thaw it). */
  signal(signal: NodeJS.Signals): void;
  /** Starts it again on the same port and data directory. */
  restart(): Promise<void>;
  /** Stops it (SIGTERM, waits) and removes its data directory. */
  stop(): Promise<void>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts redis-server; `args` are extra settings (e.g. ["--requirepass", "pw"] or ["--appendonly", "no"]). */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "afs-redis-"));
  const port = await freePort();
  let running: { child: ChildProcess; exited: Promise<void> } | undefined;
  const launch = async () => {
    const all = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes"];
    all.push("--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", "", ...args);
    const child = spawn(REDIS_SERVER, all, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", (e: NodeJS.ErrnoException) => {
        stderr +=
          e.code === "ENOENT"
            ? `${REDIS_SERVER} is not installed: install redis-server (.ci/run does), or run only SQLite with AFS_TEST_STORES=sqlite`
            : e.message;
        resolve();
      });
    });
    const failed = exited.then(() => true);
    running = { child, exited };
    try {
      await waitForPing(port, failed, () => stderr);
    } catch (e) {
      await kill("SIGKILL");
      throw e;
    }
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const r = running;
    running = undefined;
    if (!r) return;
    if (r.child.exitCode === null && r.child.signalCode === null) {
      // A frozen server (SIGSTOP in a test that failed half way) only acts on SIGTERM once thawed;
      // and whatever happens, cleanup must not hang on it.
      r.child.kill("SIGCONT");
      r.child.kill(signal);
      const timer = setTimeout(() => r.child.kill("SIGKILL"), 5_000);
      await r.exited;
      clearTimeout(timer);
    }
    await r.exited;
  };
  try {
    await launch();
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}/0`,
    kill,
    signal: (signal) => {
      running?.child.kill(signal);
    },
    restart: launch,
    stop: async () => {
      await kill("SIGTERM");
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(port: number, failed: Promise<boolean>, log: () => string): Promise<void> {
  let ended = false;
  void failed.then(() => {
    ended = true;
  });
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (ended) throw new Error(`redis-server did not start: ${log()}`);
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server did not answer PING on port ${port} within 10 s: ${log()}`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once("error", () => done(false));
    s.connect(port, "127.0.0.1", () => s.write("PING\r\n"));
    // A server with a password answers NOAUTH: it is up all the same.
    s.once("data", (d) => done(/^(\+PONG|-NOAUTH)/.test(d.toString())));
  });
}
