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

export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "afs-redis-"));
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes"];
  args.push("--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", "", ...extraArgs);
  const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitForPing(port, child, () => stderr);
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}/0`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${log()}`);
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
    s.once("data", (d) => done(d.toString().startsWith("+PONG")));
  });
}
