// `afs daemon …`: the resident afs that answers searches for short-lived afs processes (see
// resident/server.ts). It starts on its own the first time a search runs without one and leaves
// after a quiet spell; these commands start, stop, inspect or run it in the foreground.
import { setTimeout as sleep } from "node:timers/promises";
import { type Command, InvalidArgumentError } from "commander";
import { AfsError } from "../../core/errors.js";
import type { Env } from "../../core/settings.js";
import type { Io, ProgramRunner } from "../context.js";
import { ExitStatus } from "../errors.js";
import { bytes, type JsonFlag, plural } from "../output.js";
import { ask, startResident } from "../resident/client.js";
import { residentDisabled, socketPath } from "../resident/socket.js";
import { leaf } from "./leaf.js";

// Long enough to span an agent's pauses between searches; short enough that the memory its caches
// hold (a few hundred MB on a large tree) goes back soon after: leaving is the one sure way to.
const DEFAULT_IDLE_SECONDS = 300;

interface Status {
  running: boolean;
  socket: string;
  pid?: number;
  uptime_ms?: number;
  served?: number;
  stores?: number;
  rss_bytes?: number;
  heap_bytes?: number;
  external_bytes?: number;
}

function socketOrThrow(env: Env): string {
  const socket = socketPath(env);
  if (socket === undefined) {
    throw new AfsError(
      "PERMISSION_DENIED",
      "no private directory for the resident afs's socket: set AFS_RUNTIME_DIR to a short path of a directory only you can use (mode 700)",
    );
  }
  return socket;
}

/** The resident afs's own report, or not running. */
async function status(socket: string): Promise<Status> {
  let text = "";
  const code = await ask(
    socket,
    { kind: "status" },
    {
      stdout: (data) => {
        text += Buffer.from(data).toString("utf8");
        return true;
      },
      stderr: () => true,
    },
  );
  if (code !== 0) return { running: false, socket };
  return { running: true, socket, ...(JSON.parse(text) as Omit<Status, "running" | "socket">) };
}

function parseIdle(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a number of seconds (more than 0)");
  return n;
}

const describe = (s: Status): string =>
  s.running
    ? `running: pid ${s.pid}, up ${Math.round((s.uptime_ms ?? 0) / 1000)} s, ${plural(s.served ?? 0, "command")} answered, ${plural(s.stores ?? 0, "store")} open, ${bytes(s.rss_bytes ?? 0)} resident memory (${s.socket})`
    : `not running (${s.socket})`;

/** `runner`: the command line the resident afs runs for its clients (given, so nothing here imports program.ts). */
export function registerDaemon(program: Command, io: Io, runner: ProgramRunner): void {
  const daemon = program
    .command("daemon")
    .description("the resident afs that answers fs grep, glob, ls and query for short-lived afs processes");

  leaf(daemon, "run", "serve in the foreground until stopped or idle", false)
    .option(
      "--idle <seconds>",
      `leave after this long without a command (default: $AFS_DAEMON_IDLE or ${DEFAULT_IDLE_SECONDS})`,
      parseIdle,
    )
    .action(async (flags: { idle?: number }) => {
      const socket = socketOrThrow(io.env);
      const idle = flags.idle ?? parseIdle(io.env.AFS_DAEMON_IDLE ?? String(DEFAULT_IDLE_SECONDS));
      const { serveResident } = await import("../resident/server.js");
      await serveResident({
        socket,
        idleMs: idle * 1000,
        runner,
        env: io.env,
        cwd: io.cwd,
        hold: (stores) => io.hold(stores),
      });
    });

  leaf(daemon, "start", "start it in the background (a search also starts it when none runs)").action(
    async (flags: JsonFlag) => {
      if (residentDisabled(io.env)) {
        throw new AfsError("INVALID_ARGUMENT", "AFS_DAEMON is off; unset it to use the resident afs");
      }
      const socket = socketOrThrow(io.env);
      let now = await status(socket);
      if (!now.running) {
        await startResident(io.env);
        // It answers once it has bound its socket; give it a few seconds on a busy machine.
        for (let waited = 0; !now.running && waited < 10_000; waited += 50) {
          await sleep(50);
          now = await status(socket);
        }
        if (!now.running)
          throw new AfsError("IO_ERROR", `the resident afs did not start; try afs daemon run to see why`);
      }
      io.emit(flags, now, describe);
    },
  );

  leaf(daemon, "stop", "stop it (the command it is answering finishes first)").action(async (flags: JsonFlag) => {
    const socket = socketOrThrow(io.env);
    const before = await status(socket);
    if (before.running) await ask(socket, { kind: "stop" }, { stdout: () => true, stderr: () => true });
    io.emit(flags, { stopped: before.running, socket }, (r) => (r.stopped ? "stopped" : `not running (${r.socket})`));
  });

  leaf(daemon, "status", "whether it runs, since when, and how much it has answered").action(
    async (flags: JsonFlag) => {
      const now = await status(socketOrThrow(io.env));
      io.emit(flags, now, describe);
      if (!now.running && !flags.json) throw new ExitStatus(3);
    },
  );
}
