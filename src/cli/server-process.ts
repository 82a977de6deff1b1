// An MCP server as `afs broker`'s child: spawned in its own process group (whatever it starts goes
// when it goes), its stdio as raw streams for the proxy, and a stop that closes its stdin first
// (the MCP stdio way to say goodbye), then SIGTERM to the group, then SIGKILL if it lingers.
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { AfsError } from "../core/errors.js";

export interface ServerExit {
  /** The status to exit with: the server's own, or 128 + the signal's number. */
  status: number;
  /** "exited with status 3", "exited on SIGKILL". */
  text: string;
}

export interface ServerProcess {
  child: ChildProcess;
  stdin: Writable;
  stdout: Readable;
  exited: Promise<ServerExit>;
  /** SIGTERM to the whole group, now. */
  kill(): void;
  stop(): Promise<void>;
}

const GOODBYE_MS = 1000;
const GRACE_MS = 2000;
const SIGNALS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Starts the server; rejects with one clear error when the command cannot run at all. */
export async function startServer(command: readonly string[]): Promise<ServerProcess> {
  const [file, ...args] = command;
  if (!file)
    throw new AfsError(
      "INVALID_ARGUMENT",
      "no server command given; put it after --, e.g. afs broker --root . -- npx my-server",
    );
  const child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"], detached: true });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "ENOENT"
          ? new AfsError("NOT_FOUND", `server command ${file} was not found; check the name and your PATH`)
          : new AfsError("IO_ERROR", `cannot start ${file}: ${e.message}`),
      ),
    );
  });
  const exited = new Promise<ServerExit>((resolve) =>
    child.once("exit", (code, signal) =>
      resolve(
        signal
          ? { status: 128 + (SIGNALS[signal] ?? 0), text: `exited on ${signal}` }
          : { status: code ?? 1, text: `exited with status ${code}` },
      ),
    ),
  );
  // A write to a server that died shows up as its exit, not as a crash.
  child.stdin?.on("error", () => {});
  const pid = child.pid as number;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async (): Promise<void> => {
    if (!gone()) {
      child.stdin?.end();
      const timers = [
        setTimeout(() => signalGroup(pid, "SIGTERM"), GOODBYE_MS),
        setTimeout(() => signalGroup(pid, "SIGKILL"), GOODBYE_MS + GRACE_MS),
      ];
      await exited;
      for (const t of timers) clearTimeout(t);
    }
    // The server is gone; anything it left in its group goes too.
    signalGroup(pid, "SIGKILL");
  };
  return {
    child,
    stdin: child.stdin as Writable,
    stdout: child.stdout as Readable,
    exited,
    kill: () => signalGroup(pid, "SIGTERM"),
    stop,
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}
