// afs as an ACP client over any stream: initialize with the fs capabilities it really serves, start
// sessions whose directories AcpFiles confines, answer permission requests by policy, and run
// prompt turns that end only once every update of the turn has been handled.
import * as acp from "@agentclientprotocol/sdk";
import type { Approvals } from "../../access/approvals.js";
import { AfsError } from "../../core/errors.js";
import { unifiedPatch } from "../../core/unified-diff.js";
import { VERSION } from "../../workspace/version.js";
import { answer } from "./errors.js";
import type { AcpFiles } from "./files.js";

export interface AcpClientOptions {
  files: AcpFiles;
  approvals: Approvals;
  /** Every session/update, in arrival order (stream it, show it). */
  onUpdate?: (notification: acp.SessionNotification) => void;
}

export interface SessionOptions {
  cwd: string;
  additionalDirectories?: string[];
  mcpServers?: acp.McpServer[];
}

export class AcpClient {
  /** The agent's answer to initialize, once it came. */
  agentInfo: acp.InitializeResponse | null = null;
  private readonly connection: acp.ClientConnection;
  /** Per session, the chain of update handling: a turn ends after its updates are applied. */
  private readonly drains = new Map<string, Promise<void>>();

  private constructor(
    stream: acp.Stream,
    private readonly options: AcpClientOptions,
  ) {
    const { files, approvals } = options;
    this.connection = acp
      .client({ name: "afs" })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => answer(() => files.readTextFile(params)))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => answer(() => files.writeTextFile(params)))
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) =>
        answer(() => permission(approvals, files, params)),
      )
      .onNotification(acp.methods.client.session.update, ({ params }) => this.update(params))
      .connect(stream);
  }

  static connect(stream: acp.Stream, options: AcpClientOptions): AcpClient {
    return new AcpClient(stream, options);
  }

  get closed(): Promise<void> {
    return this.connection.closed;
  }

  /** The agent's name as it introduced itself ("agent" when it did not): who its changes are recorded as. */
  get agentId(): string {
    return this.agentInfo?.agentInfo?.name || "agent";
  }

  /** The agent's name and version as it introduced itself. */
  get agentName(): string {
    const info = this.agentInfo?.agentInfo;
    return info ? `${info.name}${info.version ? ` ${info.version}` : ""}` : "agent";
  }

  /** Protocol version 1, advertising exactly the fs methods AcpFiles serves; TIMEOUT if the agent never answers. */
  async initialize(timeoutMs = 30_000): Promise<acp.InitializeResponse> {
    const request = this.connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      clientInfo: { name: "afs", title: "afs (agent filesystem)", version: VERSION },
    });
    this.agentInfo = await within(request, timeoutMs, "the agent did not answer initialize");
    return this.agentInfo;
  }

  async newSession(options: SessionOptions, timeoutMs = 60_000): Promise<string> {
    const create = async (): Promise<string> => {
      const request = this.connection.agent.request(acp.methods.agent.session.new, {
        cwd: options.cwd,
        mcpServers: options.mcpServers ?? [],
        ...(options.additionalDirectories?.length ? { additionalDirectories: options.additionalDirectories } : {}),
      });
      return (await within(request, timeoutMs, "the agent did not answer session/new")).sessionId;
    };
    return this.options.files.addSession(create, options.cwd, options.additionalDirectories);
  }

  /** One prompt turn; resolves after the agent's reply and every update it sent before it. */
  async prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    const response = await this.connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    // The SDK settles a response at once but hands notifications to handlers asynchronously, so the
    // turn's last updates can still be on their way: let them reach the chain, then drain it.
    await new Promise((done) => setImmediate(done));
    await this.drained(sessionId);
    return response;
  }

  async cancel(sessionId: string): Promise<void> {
    await this.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  close(): void {
    this.connection.close();
  }

  private update(notification: acp.SessionNotification): Promise<void> {
    const previous = this.drains.get(notification.sessionId) ?? Promise.resolve();
    const next = previous.then(() => {
      const u = notification.update;
      if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
        this.options.files.noteToolCall(notification.sessionId, u);
      }
      this.options.onUpdate?.(notification);
    });
    this.drains.set(notification.sessionId, next);
    return next;
  }

  private async drained(sessionId: string): Promise<void> {
    for (;;) {
      const tail = this.drains.get(sessionId);
      await tail;
      if (this.drains.get(sessionId) === tail) return;
    }
  }
}

/** Answers session/request_permission by the approval policy, picking the agent's own option. */
async function permission(
  approvals: Approvals,
  files: AcpFiles,
  params: acp.RequestPermissionRequest,
): Promise<acp.RequestPermissionResponse> {
  const call = params.toolCall;
  // Agents may introduce a tool call only here (Gemini CLI does): note it, so the write that
  // carries it out is attributed to it.
  files.noteToolCall(params.sessionId, { ...call, status: call.status ?? "pending" });
  const diffs = (call.content ?? []).flatMap((c) =>
    c.type === "diff" ? [{ path: c.path, patch: unifiedPatch(c.path, c.oldText ?? null, c.newText) }] : [],
  );
  const paths = [...new Set([...(call.locations ?? []).map((l) => l.path), ...diffs.map((d) => d.path)])];
  const decision = await approvals.decide({
    kind: "permission",
    session: params.sessionId,
    title: call.title ?? call.toolCallId,
    paths,
    ...(diffs.length > 0 ? { diff: diffs.map((d) => d.patch).join("") } : {}),
  });
  // A refused call never runs, and agents send no update closing it.
  if (!decision.allowed) files.noteToolCall(params.sessionId, { toolCallId: call.toolCallId, status: "failed" });
  const kinds: acp.PermissionOptionKind[] = decision.allowed
    ? ["allow_once", "allow_always"]
    : ["reject_once", "reject_always"];
  for (const kind of kinds) {
    const option = params.options.find((o) => o.kind === kind);
    if (option) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new AfsError("TIMEOUT", `${what} within ${Math.round(ms / 1000)} s; is it an ACP agent?`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
