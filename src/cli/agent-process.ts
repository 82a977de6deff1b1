// An ACP agent as a child in its own process group (see process-group.ts), its stdio as an ACP
// stream, and a promise that fails with a clear error the moment the agent exits.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { AfsError } from "../core/errors.js";
import { type GroupChild, spawnGroup } from "./process-group.js";

export interface AgentProcess extends GroupChild {
  stream: acp.Stream;
  /** Rejects with a clear error when the agent exits; never resolves. */
  failed: Promise<never>;
}

export async function startAgent(
  command: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<AgentProcess> {
  const child = await spawnGroup(command, "agent", cwd, env);
  const failed = child.exited.then((exit) => {
    throw new AfsError("IO_ERROR", `the agent (${command[0]}) ${exit.text}`);
  });
  failed.catch(() => {}); // observed by whoever races it; never an unhandled rejection
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  // An agent is not asked to leave by closing stdin first: it may be mid-turn, so SIGTERM at once.
  return { ...child, stream, failed, stop: () => child.stop(0) };
}
