// An ACP agent as a child process: spawned in its own process group (so whatever it starts, such as
// the afs MCP server it is handed, goes when it goes), its stdio as an ACP stream, and a stop that
// ends the whole group: SIGTERM first, SIGKILL if it lingers.
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { AfsError } from "../core/errors.js";

export interface AgentProcess {
  child: ChildProcess;
  stream: acp.Stream;
  /** Rejects with a clear error when the agent cannot start or exits; never resolves. */
  failed: Promise<never>;
  stop(): Promise<void>;
}

const GRACE_MS = 2000;

export function startAgent(command: readonly string[], cwd: string): AgentProcess {
  const [file, ...args] = command;
  if (!file)
    throw new AfsError("INVALID_ARGUMENT", "no agent command given; put it after --, e.g. afs acp -- gemini --acp");
  const child = spawn(file, args, { cwd, stdio: ["pipe", "pipe", "inherit"], detached: true });
  let exited = false;
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (e: NodeJS.ErrnoException) => {
      exited = true;
      reject(
        new AfsError(
          e.code === "ENOENT" ? "NOT_FOUND" : "IO_ERROR",
          e.code === "ENOENT"
            ? `agent command ${file} was not found; check the name and your PATH`
            : `cannot start ${file}: ${e.message}`,
        ),
      );
    });
    child.once("exit", (code, signal) => {
      exited = true;
      reject(new AfsError("IO_ERROR", `the agent (${file}) exited ${signal ? `on ${signal}` : `with status ${code}`}`));
    });
  });
  failed.catch(() => {}); // observed by whoever races it; never an unhandled rejection
  // A write to an agent that died is reported through `failed`, not as a crash.
  child.stdin?.on("error", () => {});
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
  );
  const stop = async (): Promise<void> => {
    if (exited || child.pid === undefined) return;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    signalGroup(child.pid, "SIGTERM");
    child.stdin?.end();
    const timer = setTimeout(() => signalGroup(child.pid as number, "SIGKILL"), GRACE_MS);
    await gone;
    clearTimeout(timer);
    // The agent is gone; anything it left in its group (an MCP server) goes too.
    signalGroup(child.pid, "SIGKILL");
  };
  return { child, stream, failed, stop };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}
