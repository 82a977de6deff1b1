// A child process in its own process group, as `afs acp` runs an agent and `afs broker` a server:
// whatever it starts (an MCP server, a shell) goes when it goes. A stop closes its stdin first (the
// stdio way to say goodbye), then SIGTERM to the group, then SIGKILL if it lingers.
import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable, Writable } from "node:stream";
import { AfsError } from "../core/errors.js";

export interface ChildExit {
  /** The status to exit with: the child's own, or 128 + the signal's number. */
  status: number;
  /** "exited with status 3", "exited on SIGKILL". */
  text: string;
}

export interface GroupChild {
  child: ChildProcess;
  stdin: Writable;
  stdout: Readable;
  exited: Promise<ChildExit>;
  /** SIGTERM to the whole group, now. */
  kill(): void;
  /** Ends the child and its group; `goodbyeMs` is how long it may take to leave after stdin closes. */
  stop(goodbyeMs?: number): Promise<void>;
}

const GRACE_MS = 2000;

/** How a child ended, as a shell says it: its status, or 128 + the number of the signal that ended it. */
export function childExit(code: number | null, signal: NodeJS.Signals | null): ChildExit {
  return signal
    ? { status: 128 + (constants.signals[signal] ?? 0), text: `exited on ${signal}` }
    : { status: code ?? 1, text: `exited with status ${code}` };
}

/** Starts `command`; rejects with one clear error naming `what` when it cannot run at all. */
/** `cwd` and `env`: the invocation's, so the child runs where and as its caller asked. */
export async function spawnGroup(
  command: readonly string[],
  what: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<GroupChild> {
  const [file, ...args] = command;
  if (!file) throw new AfsError("INVALID_ARGUMENT", `no ${what} command given; put it after --`);
  const child = spawn(file, args, { cwd, env, stdio: ["pipe", "pipe", "inherit"], detached: true });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "ENOENT"
          ? new AfsError("NOT_FOUND", `${what} command ${file} was not found; check the name and your PATH`)
          : new AfsError("IO_ERROR", `cannot start ${file}: ${e.message}`),
      ),
    );
  });
  const exited = new Promise<ChildExit>((resolve) =>
    child.once("exit", (code, signal) => resolve(childExit(code, signal))),
  );
  // A write to a child that died shows up as its exit, not as a crash.
  child.stdin?.on("error", () => {});
  const pid = child.pid as number;
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async (goodbyeMs = 1000): Promise<void> => {
    if (!gone()) {
      child.stdin?.end();
      const timers = [
        setTimeout(() => signalGroup(pid, "SIGTERM"), goodbyeMs),
        setTimeout(() => signalGroup(pid, "SIGKILL"), goodbyeMs + GRACE_MS),
      ];
      await exited;
      for (const t of timers) clearTimeout(t);
    }
    // The child is gone; anything it left in its group goes too.
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
