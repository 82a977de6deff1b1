// What `afs acp` does once started: runs an ACP agent on DIR with afs as its client. DIR is a mount
// of the session's workspace (./acp-mount.ts): the agent's writes land in DIR and are uploaded, the
// workspace's changes (its afs MCP server, other machines) come down into DIR, and every turn starts
// and ends with a flush, so each turn that changed files ends in a checkpoint, whichever way the
// agent made its changes.
import { stat } from "node:fs/promises";
import { createInterface, type Interface } from "node:readline/promises";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { ApprovalQueue, whereToDecide } from "../access/approval-queue.js";
import { type ApprovalRequest, Approvals, parseApprovalMode } from "../access/approvals.js";
import { consoleApprovals } from "../access/console-approvals.js";
import { resolveLimits } from "../access/limits.js";
import { AfsError } from "../core/errors.js";
import { AcpClient } from "../protocols/acp/client.js";
import { AcpFiles } from "../protocols/acp/files.js";
import { LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
import type { Afs } from "../workspace/afs.js";
import type { CheckpointInfo } from "../workspace/info.js";
import { SessionMount } from "./acp-mount.js";
import { TurnView } from "./acp-view.js";
import { startAgent } from "./agent-process.js";
import type { Io } from "./context.js";
import type { Sink } from "./invocation.js";

export interface AcpFlags {
  dir?: string;
  approve: string;
  prompt?: string;
  initTimeout: string;
  prefer?: "local" | "remote";
  /** Deprecated: --prefer local. */
  adopt?: boolean;
}

export async function runAcp(
  afs: Afs,
  command: string[],
  flags: AcpFlags,
  workspace: string | undefined,
  io: Io,
): Promise<void> {
  const dir = io.path(flags.dir ?? ".");
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    throw new AfsError("NOT_FOUND", `${dir} is not a directory; pass --dir with an existing project directory`);
  }
  const mode = parseApprovalMode(flags.approve);
  const stdin = io.invocation.stdin;
  const terminal = stdin.isTTY === true;
  if (mode === "ask" && !terminal && flags.prompt === undefined) {
    throw new AfsError("INVALID_ARGUMENT", "--approve ask needs a terminal; pass --approve allow or deny");
  }
  const timeoutMs = Number(flags.initTimeout) * 1000;
  if (!(timeoutMs > 0))
    throw new AfsError("INVALID_ARGUMENT", `--init-timeout must be a number of seconds; got ${flags.initTimeout}`);

  if (flags.adopt && flags.prefer === "remote") {
    throw new AfsError("INVALID_ARGUMENT", "--adopt means --prefer local; pass only one of them");
  }
  if (flags.adopt) io.warn("afs: --adopt is deprecated; it means --prefer local\n");
  const prefer = flags.prefer ?? (flags.adopt ? "local" : undefined);
  // While a turn runs, what changes in DIR is the agent's doing (its fs/* writes and its shell's):
  // recorded as the agent's; between turns, as the person's (the engine's actor).
  let turnActor: string | undefined;
  const session = await SessionMount.open(afs, dir, {
    ...(workspace === undefined ? {} : { workspace }),
    ...(prefer === undefined ? {} : { prefer }),
    actor: () => turnActor,
    log: (line) => io.warn(`${line}\n`),
  });
  const rl = terminal ? createInterface({ input: stdin, output: sinkStream(io.invocation.stderr) }) : null;
  const note = (text: string): void => io.warn(`afs: ${text}\n`);
  // --approve console: each question waits in the store for a person in the afs console.
  const inConsole =
    mode === "console"
      ? consoleApprovals(new ApprovalQueue(afs.approvals), {
          process: "afs acp",
          agent: () => client.agentName,
          workspace: session.workspace,
          roots: [dir],
          onWaiting: (id, title) =>
            note(`${title}: ${whereToDecide(afs.settings.env.AFS_CONSOLE_URL)} (request ${id})`),
        })
      : null;
  const approvals = new Approvals(mode, {
    ...(mode === "ask" ? { ask: (request: ApprovalRequest) => askOnTerminal(rl, request, io) } : {}),
    ...(inConsole ? { ask: inConsole.ask } : {}),
    // Every decision leaves a line: the audit trail of what the agent was let do.
    onDecision: (d) =>
      note(
        `${d.allowed ? "allowed" : "refused"} ${d.title} (${d.by === "policy" ? `--approve ${mode}` : d.by})${d.note ? `: ${d.note}` : ""}`,
      ),
  });
  const files = new AcpFiles({
    limits: resolveLimits({}, afs.settings.env),
    approvals,
    agentName: () => client.agentName,
    // The project directory is the mount: each write is uploaded before the agent hears back. Any
    // other directory the agent is given is confined on its own.
    openVolume: async (root) => (root === dir ? session.volume() : LocalDirVolume.open(root)),
  });
  const view = new TurnView(io.write);
  const agent = await startAgent(command, dir, { ...io.env }).catch(async (e: unknown) => {
    rl?.close();
    await inConsole?.close();
    await session.close();
    throw e;
  });
  const client = AcpClient.connect(agent.stream, { files, approvals, onUpdate: (n) => view.update(n) });
  const stopAll = async (): Promise<void> => {
    rl?.close();
    await inConsole?.close();
    client.close();
    await agent.stop();
    await session.close();
  };
  const onSignal = (): void => {
    void stopAll().then(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // Whatever the agent is asked, its death ends the wait. The connection usually notices first (as
  // "connection closed"): report why the agent went instead, when it says so within a second.
  const raced = async <T>(p: Promise<T>): Promise<T> => {
    try {
      return await Promise.race([p, agent.failed]);
    } catch (e) {
      throw await Promise.race([agent.failed.catch((why: unknown) => why), sleep(1000).then(() => e)]);
    }
  };
  try {
    await raced(client.initialize(timeoutMs));
    const sessionId = await raced(client.newSession({ cwd: dir, mcpServers: [afsMcpServer(afs, session.workspace)] }));
    note(`${client.agentName} on ${dir}, workspace ${session.workspace}, approvals: ${mode}`);
    const turn = async (n: number, prompt: string): Promise<string> => {
      // Edits made between turns (by a person) are their own checkpoint, so a turn's shows only the agent's work.
      const before = await session.checkpointTurn({
        name: await freeName(afs, session.workspace, `edits-${n}`),
        description: `changes before turn ${n}`,
      });
      if (before) note(`checkpoint ${before.name}: changes made in ${dir} before turn ${n}`);
      const base = (await afs.workspaces.get(session.workspace)).head;
      turnActor = client.agentId;
      let response: Awaited<ReturnType<typeof client.prompt>>;
      let cp: CheckpointInfo | null;
      try {
        response = await raced(client.prompt(sessionId, prompt));
        view.end();
        cp = await session.checkpointTurn({
          name: await freeName(afs, session.workspace, `turn-${n}`),
          description: `turn ${n}: ${prompt.length > 120 ? `${prompt.slice(0, 117)}...` : prompt}`,
        });
      } finally {
        turnActor = undefined;
      }
      note(
        cp
          ? `turn ${n} ended (${response.stopReason}); checkpoint ${cp.name}: afs cp diff ${base} ${cp.name} -w ${session.workspace}`
          : `turn ${n} ended (${response.stopReason}); no files changed`,
      );
      return response.stopReason;
    };
    if (flags.prompt !== undefined) {
      const stopReason = await turn(await nextTurn(afs, session.workspace), flags.prompt);
      if (stopReason !== "end_turn") throw new AfsError("IO_ERROR", `the turn ended with ${stopReason}`);
      return;
    }
    if (!rl) throw new AfsError("INVALID_ARGUMENT", "stdin is not a terminal; pass --prompt TEXT for one turn");
    for (;;) {
      const prompt = (await rl.question("> ").catch(() => null))?.trim();
      if (prompt === undefined || prompt === null) return;
      if (prompt === "") continue;
      await turn(await nextTurn(afs, session.workspace), prompt);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await stopAll();
  }
}

/** The afs MCP server the agent is handed: the session's workspace, through this same afs. */
function afsMcpServer(afs: Afs, workspace: string) {
  const main = process.argv[1] ?? "afs";
  return {
    name: "afs",
    command: process.execPath,
    args: [main, "mcp", "--workspace", workspace, "--home", afs.home, "--store", afs.storeUrl],
    env: [],
  };
}

/** The terminal readline draws on: the invocation's stderr. */
function sinkStream(sink: Sink): Writable {
  return (
    sink.terminal ??
    new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        sink.write(chunk);
        done();
      },
    })
  );
}

async function askOnTerminal(rl: Interface | null, request: ApprovalRequest, io: Io): Promise<boolean> {
  if (!rl) return false;
  if (request.diff) io.warn(`${request.diff.trimEnd()}\n`);
  const answer = await rl.question(`afs: allow ${request.title}? [y/N] `).catch(() => "");
  return /^y(es)?$/i.test(answer.trim());
}

/** The number of the next turn in this workspace: one past the highest turn-N checkpoint. */
async function nextTurn(afs: Afs, workspace: string): Promise<number> {
  let highest = 0;
  for (const cp of await afs.checkpoints.list(workspace)) {
    const n = /^turn-(\d+)$/.exec(cp.name)?.[1];
    if (n) highest = Math.max(highest, Number(n));
  }
  return highest + 1;
}

async function freeName(afs: Afs, workspace: string, name: string): Promise<string> {
  const taken = new Set((await afs.checkpoints.list(workspace)).map((c) => c.name));
  if (!taken.has(name)) return name;
  for (let i = 2; ; i++) if (!taken.has(`${name}-${i}`)) return `${name}-${i}`;
}
