// The resident afs: one process per user and build that answers the read commands of short-lived
// `afs` processes over a Unix socket, with its stores, search indexes and compiled code kept warm.
// A fresh process pays ~60 ms to start Node and then, for a search, opens the store, looks the
// index up and reads from a cold cache; the resident one only does the search. It runs the very
// same command line (program.ts) with the client's arguments, directory and environment, one
// command at a time, and leaves after a quiet spell.
import { unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { isAbsolute } from "node:path";
import { AfsError } from "../../core/errors.js";
import { Afs } from "../../workspace/afs.js";
import { defaultStoreUrl, resolveHome } from "../../workspace/config.js";
import { lendAfs } from "../context.js";
import { drained, withSink } from "../output.js";
import { buildProgram, main } from "../program.js";
import { FRAME, frame, type ResidentRequest } from "./socket.js";

export interface ResidentOptions {
  socket: string;
  /** Leave after this long without a request. */
  idleMs: number;
}

/** A request line longer than this is not from an afs client. */
const MAX_REQUEST_BYTES = 1 << 20;

/** What else an open Afs reads from the environment, besides the AFS_* settings. */
const OPENED_WITH = new Set(["HOME", "USER", "OPENAI_API_KEY"]);

/** A SQLite store given by a relative path: a different file from each directory. */
const relativeStore = (url: string): boolean =>
  /^(sqlite:)?[^:]*$/.test(url) && !isAbsolute(url.replace(/^sqlite:/, ""));

/** The open stores, kept between commands; keyed by what Afs.open resolves them from. */
class Stores {
  private readonly open = new Map<string, Afs>();

  async borrow(options: { home?: string; store?: string }): Promise<Afs> {
    const home = resolveHome(options.home);
    const url = options.store ?? process.env.AFS_STORE ?? defaultStoreUrl(home);
    // A relative store path means a different file from each directory.
    const where = relativeStore(url) ? process.cwd() : "";
    // An Afs keeps what it read from the environment when it opened (the actor, the limits, query's
    // embedder), so callers with other settings get their own; the workspace is chosen per command.
    const settings = Object.entries(process.env)
      .filter(([k]) => (k.startsWith("AFS_") && k !== "AFS_WORKSPACE") || OPENED_WITH.has(k))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    const key = JSON.stringify([home, url, where, settings]);
    const lent = this.open.get(key);
    // A store file deleted or replaced since it was opened (a fresh home, a restore) is reopened.
    if (lent && !lent.maintenance.storeReplaced()) return lent;
    if (lent) {
      this.open.delete(key);
      await lent.close();
    }
    const afs = await Afs.open({ home, store: url });
    this.open.set(key, afs);
    return afs;
  }

  get size(): number {
    return this.open.size;
  }

  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(all.map((afs) => afs.close()));
  }
}

/**
 * A head start for the first command: the commands' modules loaded, and the store of the process
 * that started this one (most likely the next caller's) opened, with the environment it passed on.
 */
async function prewarm(stores: Stores): Promise<void> {
  try {
    for (const sub of ["grep", "glob", "ls", "query"]) await buildProgram(["fs", sub]);
    const store = process.env.AFS_STORE;
    if (store === undefined || !relativeStore(store)) await stores.borrow({});
  } catch {
    // The first command will say what is wrong, to whoever runs it.
  }
}

/** Runs one command line as the client would have, its output framed onto the connection. */
async function runCommand(conn: Socket, request: Extract<ResidentRequest, { kind: "run" }>): Promise<void> {
  // Its caller gave up (Ctrl-C) while it waited for its turn.
  if (conn.destroyed) return;
  // Always "written": a caller that went away must not stall the resident's queue.
  const send = (kind: number, data: string | Uint8Array): boolean => conn.destroyed || conn.write(frame(kind, data));
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  let status: number;
  try {
    // The command runs in its caller's environment and directory, as it would have there.
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, request.env);
    process.chdir(request.cwd);
    status = await withSink(
      {
        out: (data) => send(FRAME.stdout, data),
        drain: () => drained(conn),
        err: (text) => void send(FRAME.stderr, text),
      },
      () => main(request.argv),
    );
  } catch (e) {
    send(FRAME.stderr, `afs: the resident afs could not run the command: ${(e as Error).message} [IO_ERROR]\n`);
    status = 1;
  } finally {
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, savedEnv);
    process.chdir(savedCwd);
  }
  if (!conn.destroyed) conn.end(frame(FRAME.exit, String(status)));
}

const isRequest = (v: unknown): v is ResidentRequest => {
  const kind = (v as { kind?: unknown } | null)?.kind;
  if (kind === "status" || kind === "stop") return true;
  const r = v as Partial<Extract<ResidentRequest, { kind: "run" }>>;
  return (
    kind === "run" &&
    Array.isArray(r.argv) &&
    r.argv.every((a) => typeof a === "string") &&
    typeof r.cwd === "string" &&
    typeof r.env === "object" &&
    r.env !== null &&
    Object.values(r.env).every((v) => typeof v === "string")
  );
};

/** Reads the request line, then calls `handle` with it; a malformed request ends the connection. */
function onRequest(conn: Socket, handle: (request: ResidentRequest) => void): void {
  let line = "";
  const onData = (chunk: Buffer): void => {
    line += chunk.toString("utf8");
    const end = line.indexOf("\n");
    if (end === -1) {
      if (line.length > MAX_REQUEST_BYTES) conn.destroy();
      return;
    }
    conn.off("data", onData);
    let request: unknown;
    try {
      request = JSON.parse(line.slice(0, end));
    } catch {
      request = undefined;
    }
    if (isRequest(request)) handle(request);
    else conn.destroy();
  };
  conn.on("data", onData);
}

/** Whether something answers on the socket (a stale file from a crashed process does not). */
const answers = (socket: string): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createConnection(socket);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });

async function listen(server: Server, socket: string): Promise<void> {
  const attempt = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await attempt();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
    if (await answers(socket)) {
      throw new AfsError("ALREADY_EXISTS", `a resident afs already answers on ${socket}; see afs daemon status`);
    }
    // Left by a process that died: take its place.
    unlinkSync(socket);
    await attempt();
  }
}

/** Serves until stopped (a stop request or `idleMs` without a request; signals close it via context.ts). */
export async function serveResident(options: ResidentOptions): Promise<void> {
  const stores = new Stores();
  const started = Date.now();
  let served = 0;
  // Commands share process-wide state (settings, directory, output), so they run one at a time.
  let queue: Promise<void> = Promise.resolve();
  let idle: NodeJS.Timeout | undefined;
  let stopping: Promise<void> | undefined;

  const server = createServer((conn) => {
    conn.on("error", () => conn.destroy());
    onRequest(conn, (request) => {
      if (request.kind === "status") {
        const { rss, heapUsed, external } = process.memoryUsage();
        const state = {
          pid: process.pid,
          uptime_ms: Date.now() - started,
          served,
          stores: stores.size,
          rss_bytes: rss,
          heap_bytes: heapUsed,
          external_bytes: external,
        };
        conn.end(Buffer.concat([frame(FRAME.stdout, `${JSON.stringify(state)}\n`), frame(FRAME.exit, "0")]));
        return;
      }
      if (request.kind === "stop") {
        conn.end(frame(FRAME.exit, "0"));
        void stop();
        return;
      }
      clearTimeout(idle);
      queue = queue
        .then(() => runCommand(conn, request))
        .finally(() => {
          served++;
          arm();
        });
    });
  });
  const arm = (): void => {
    clearTimeout(idle);
    idle = setTimeout(() => void stop(), options.idleMs);
    idle.unref();
  };
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      clearTimeout(idle);
      // No new clients; the one being answered finishes first.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      await stores.closeAll();
    })();
    return stopping;
  };

  lendAfs(stores);
  await listen(server, options.socket);
  queue = queue.then(() => prewarm(stores));
  arm();
  await new Promise<void>((resolve) => server.once("close", () => resolve()));
  await stop();
}
