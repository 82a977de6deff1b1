// The resident afs: one process per user and build that answers the read commands of short-lived
// `afs` processes over a Unix socket, with its stores, search indexes and compiled code kept warm.
// A fresh process pays ~60 ms to start Node and then, for a search, opens the store, looks the
// index up and reads from a cold cache; the resident one only does the search. It runs the very
// same command line (program.ts, handed in by the daemon command) with each client's invocation:
// its arguments, directory, environment and framed output, never touching process.env or
// process.cwd(), so several clients are answered at once. It leaves after a quiet spell.
import { unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { isAbsolute } from "node:path";
import { Readable } from "node:stream";
import { AfsError } from "../../core/errors.js";
import { type Env, readSettings } from "../../core/settings.js";
import { Afs } from "../../workspace/afs.js";
import { locate } from "../../workspace/config.js";
import { type EngineRequest, type Engines, Io, type ProgramRunner } from "../context.js";
import type { Invocation, Sink } from "../invocation.js";
import { drained } from "../invocation.js";
import { FRAME, frame, type ResidentRequest } from "./socket.js";

export interface ResidentOptions {
  socket: string;
  /** Leave after this long without a request. */
  idleMs: number;
  /** The command line run for each client. */
  runner: ProgramRunner;
  /** The environment and directory of the process that started this one (its store is opened first). */
  env: Env;
  cwd: string;
  /** Hands over what closes the open stores, for the process's signal handlers (context.ts). */
  hold?: (stores: { closeAll(): Promise<void> }) => void;
}

/** A request line longer than this is not from an afs client. */
const MAX_REQUEST_BYTES = 1 << 20;

interface Lent {
  afs: Afs;
  /** Commands using it now: one replaced under them is closed when the last of them ends. */
  users: number;
  /** Replaced (its store file was): no new command gets it. */
  retired: boolean;
  closed: boolean;
}

/** A SQLite store given by a relative path: a different file from each directory. */
const relativeStore = (url: string): boolean =>
  /^(sqlite:)?[^:]*$/.test(url) && !isAbsolute(url.replace(/^sqlite:/, ""));

/** The open stores, kept between commands and shared by those running at once; keyed by what they were opened with. */
class Stores implements Engines {
  private readonly open = new Map<string, Promise<Lent>>();

  async use<T>(request: EngineRequest, fn: (afs: Afs) => Promise<T>): Promise<T> {
    const lent = await this.borrow(request);
    try {
      return await fn(lent.afs);
    } finally {
      lent.users--;
      if (lent.retired && lent.users === 0) await this.close(lent);
    }
  }

  /** An open engine for the request, counted as in use before anything else can retire it. */
  private async borrow(request: EngineRequest): Promise<Lent> {
    const settings = readSettings(request.env, request.cwd);
    // Relative home and store paths are the caller's directory's: made absolute, they key the store.
    const { home, store } = locate(settings, request.cwd, request);
    // An Afs keeps the settings it opened with (the actor, the limits, query's embedder), so
    // callers with other settings get their own. The workspace is chosen per command (Io.workspace,
    // from the caller's AFS_WORKSPACE), so it is left out: one caller's must not become another's.
    const { AFS_WORKSPACE: _, ...opened } = settings.env;
    const key = JSON.stringify([home, store, request.surface, request.actor, opened]);
    for (;;) {
      let pending = this.open.get(key);
      if (!pending) {
        const opening = Afs.open({
          env: opened,
          cwd: request.cwd,
          home,
          store,
          surface: request.surface,
          ...(request.actor === undefined ? {} : { actor: request.actor }),
        }).then((afs): Lent => ({ afs, users: 0, retired: false, closed: false }));
        opening.catch(() => {
          if (this.open.get(key) === opening) this.open.delete(key);
        });
        this.open.set(key, opening);
        pending = opening;
      }
      const lent = await pending;
      // From here to users++ nothing awaits, so no other command can retire it in between.
      if (lent.retired) continue;
      // A store file deleted or replaced since it was opened (a fresh home, a restore) is reopened.
      if (lent.afs.maintenance.storeReplaced()) {
        if (this.open.get(key) === pending) this.open.delete(key);
        lent.retired = true;
        if (lent.users === 0) await this.close(lent);
        continue;
      }
      lent.users++;
      return lent;
    }
  }

  private async close(lent: Lent): Promise<void> {
    if (lent.closed) return;
    lent.closed = true;
    await lent.afs.close();
  }

  get size(): number {
    return this.open.size;
  }

  async closeAll(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(all.map(async (l) => this.close(await l)));
  }
}

/** A sink that keeps nothing, for the warm-up runs nobody reads. */
const nowhere: Sink = { write: () => true, drain: async () => {} };

/**
 * A head start for the first command: the commands' modules loaded, and the store of the process
 * that started this one (most likely the next caller's) opened, with the environment it passed on.
 */
async function prewarm(stores: Stores, options: ResidentOptions): Promise<void> {
  try {
    const warm = (argv: string[]): Io =>
      new Io(
        { argv, cwd: options.cwd, env: options.env, stdin: Readable.from([]), stdout: nowhere, stderr: nowhere },
        stores,
      );
    for (const sub of ["grep", "glob", "ls", "query"]) await options.runner.buildProgram(warm(["fs", sub]));
    const store = options.env.AFS_STORE;
    if (store === undefined || !relativeStore(store)) {
      await stores.use({ env: options.env, cwd: options.cwd, surface: "cli" }, async () => {});
    }
  } catch {
    // The first command will say what is wrong, to whoever runs it.
  }
}

/** Runs one command line as the client would have, with its invocation, its output framed onto the connection. */
async function runCommand(
  conn: Socket,
  request: Extract<ResidentRequest, { kind: "run" }>,
  runner: ProgramRunner,
  stores: Stores,
): Promise<void> {
  // Its caller gave up (Ctrl-C) before it started.
  if (conn.destroyed) return;
  // Always "written" to a caller that went away: its command runs out without stalling on it.
  const sink = (kind: number): Sink => ({
    write: (data) => conn.destroyed || conn.write(frame(kind, data)),
    drain: () => drained(conn),
  });
  const invocation: Invocation = {
    argv: request.argv,
    cwd: request.cwd,
    env: request.env,
    // The commands answered here never read stdin (see socket.ts): an empty one.
    stdin: Readable.from([]),
    stdout: sink(FRAME.stdout),
    stderr: sink(FRAME.stderr),
  };
  let status: number;
  try {
    status = await runner.main(invocation, stores);
  } catch (e) {
    invocation.stderr.write(`afs: the resident afs could not run the command: ${(e as Error).message} [IO_ERROR]\n`);
    status = 1;
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
  // Commands run at once, each with its own invocation; a stop waits for those running.
  const running = new Set<Promise<void>>();
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
      const run = runCommand(conn, request, options.runner, stores).finally(() => {
        running.delete(run);
        served++;
        // Quiet from the moment the last command running ends.
        if (running.size === 0) arm();
      });
      running.add(run);
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
      // No new clients; the ones being answered finish first.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      while (running.size > 0) await Promise.allSettled([...running]);
      await stores.closeAll();
    })();
    return stopping;
  };

  options.hold?.(stores);
  await listen(server, options.socket);
  const warming = prewarm(stores, options).finally(() => running.delete(warming));
  running.add(warming);
  arm();
  await new Promise<void>((resolve) => server.once("close", () => resolve()));
  await stop();
}
