// The `afs broker` proxy core, free of any transport: it sits between an MCP host and an MCP server,
// forwards every message both ways unchanged, except that it declares filesystem brokering in the
// host's initialize and answers the server's roots/list and files/* itself through a BrokerHost.
import { approvedFromElicitation, askOnTty, type ConsentQuestion, elicitationParams, HOW_TO_ALLOW } from "./ask.js";
import type { Channel, JsonRpcId, JsonRpcMessage } from "./channel.js";
import { toBrokerError } from "./errors.js";
import { BROKER_CAPABILITIES, METHODS } from "./wire.js";

/** The slice of BrokerHost the proxy uses. */
export interface BrokerHandler {
  handle(server: string, method: string, params: unknown, signal?: AbortSignal): Promise<Record<string, unknown>>;
  onNotification(cb: (server: string, method: string, params: Record<string, unknown>) => void): void;
  onRootsChanged(cb: () => void): void;
}

export interface BrokerProxyOptions {
  host: BrokerHandler;
  /** Toward the MCP host (our stdio in `afs broker`). */
  hostSide: Channel;
  /** Toward the MCP server (the child's stdio). */
  serverSide: Channel;
  /** The server's name until its initialize answer gives one. */
  serverName: string;
  /** Diagnostics (stderr in `afs broker`). */
  log?: (line: string) => void;
  /** How long a consent question may wait for the person (default 5 minutes). */
  askTimeoutMs?: number;
  /** Where to ask when the host has no elicitation (default /dev/tty; null: nowhere). */
  askFallback?: ((q: ConsentQuestion) => Promise<string[] | null>) | null;
}

const OWN_ID_PREFIX = "afs-broker-";
const isRequest = (m: JsonRpcMessage): boolean => typeof m.method === "string" && m.id !== undefined && m.id !== null;
const isNotification = (m: JsonRpcMessage): boolean => typeof m.method === "string" && m.id === undefined;
const isBrokered = (method: string): boolean => method === METHODS.rootsList || method.startsWith("files/");
const asRecord = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

export class BrokerProxy {
  private server: string;
  private hostElicits = false;
  private initializeId: JsonRpcId | null | undefined;
  /** The server may hear our notifications once the host said notifications/initialized. */
  private ready = false;
  private nextId = 1;
  private readonly own = new Map<string, (msg: JsonRpcMessage) => void>();
  private readonly running = new Map<JsonRpcId, AbortController>();
  private readonly closers: Array<(side: "host" | "server") => void> = [];
  private closed = false;

  constructor(private readonly options: BrokerProxyOptions) {
    this.server = options.serverName;
    options.hostSide.onMessage((msg, line) => this.fromHost(msg, line));
    options.serverSide.onMessage((msg, line) => this.fromServer(msg, line));
    options.hostSide.onClose(() => this.end("host"));
    options.serverSide.onClose(() => this.end("server"));
    options.host.onNotification((server, method, params) => {
      if (server !== this.server || !this.ready) return;
      options.serverSide.send({ jsonrpc: "2.0", method, params });
    });
    options.host.onRootsChanged(() => {
      if (this.ready) options.serverSide.send({ jsonrpc: "2.0", method: METHODS.rootsListChanged });
    });
  }

  get serverName(): string {
    return this.server;
  }

  /** Called once with the side that went away first. */
  onClose(cb: (side: "host" | "server") => void): void {
    this.closers.push(cb);
  }

  close(): void {
    this.end("host");
  }

  /**
   * Puts a consent question to the person: an elicitation form when the host declared the
   * capability, else the fallback (the terminal), else a refusal with how to allow. Returns the
   * approved paths; this is the `ask` a ConsentProvider in ask mode is given.
   */
  async ask(q: Omit<ConsentQuestion, "server">): Promise<string[]> {
    const question = { server: this.server, ...q };
    if (this.hostElicits) {
      const answer = await this.request("elicitation/create", elicitationParams(question));
      if (answer.error) {
        this.log(`consent question failed (${answer.error.message}); refused`);
        return [];
      }
      return approvedFromElicitation(question, answer.result);
    }
    const fallback = this.options.askFallback === undefined ? askOnTty : this.options.askFallback;
    const approved = fallback ? await fallback(question) : null;
    if (approved) return approved;
    this.log(`refused ${this.server} access to ${q.paths.join(", ")}: ${HOW_TO_ALLOW}`);
    return [];
  }

  /** Sends our own request to the host (ids that no server uses); its answer never reaches the server. */
  private request(method: string, params: Record<string, unknown>): Promise<JsonRpcMessage> {
    const id = `${OWN_ID_PREFIX}${this.nextId++}`;
    const timeoutMs = this.options.askTimeoutMs ?? 300_000;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.own.delete(id);
        resolve({ jsonrpc: "2.0", id, error: { code: -32001, message: `no answer in ${timeoutMs / 1000} s` } });
      }, timeoutMs);
      this.own.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      this.options.hostSide.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  private fromHost(msg: JsonRpcMessage, line: string): void {
    if (msg.method === undefined && typeof msg.id === "string" && this.own.has(msg.id)) {
      const done = this.own.get(msg.id);
      this.own.delete(msg.id);
      done?.(msg);
      return;
    }
    if (msg.method === "initialize" && isRequest(msg)) {
      this.initializeId = msg.id;
      const params = asRecord(msg.params);
      const capabilities = asRecord(params.capabilities);
      this.hostElicits = capabilities.elicitation !== undefined;
      const merged = {
        ...capabilities,
        roots: { ...asRecord(capabilities.roots), ...BROKER_CAPABILITIES.roots },
        experimental: { ...asRecord(capabilities.experimental), ...BROKER_CAPABILITIES.experimental },
      };
      this.options.serverSide.send({ ...msg, params: { ...params, capabilities: merged } });
      return;
    }
    if (msg.method === "notifications/initialized") this.ready = true;
    this.options.serverSide.send(msg, line);
  }

  private fromServer(msg: JsonRpcMessage, line: string): void {
    if (isRequest(msg) && isBrokered(msg.method as string)) {
      void this.answer(msg);
      return;
    }
    if (isNotification(msg) && msg.method === "notifications/cancelled") {
      const requestId = asRecord(msg.params).requestId as JsonRpcId | undefined;
      const running = requestId === undefined ? undefined : this.running.get(requestId);
      if (running) {
        running.abort(new Error(String(asRecord(msg.params).reason ?? "cancelled by the server")));
        return;
      }
    }
    if (msg.method === undefined && msg.id !== undefined && msg.id === this.initializeId) {
      const name = asRecord(asRecord(msg.result).serverInfo).name;
      if (typeof name === "string" && name !== "") this.server = name;
      this.initializeId = undefined;
    }
    this.options.hostSide.send(msg, line);
  }

  private async answer(msg: JsonRpcMessage): Promise<void> {
    const id = msg.id as JsonRpcId;
    const controller = new AbortController();
    this.running.set(id, controller);
    try {
      const result = await this.options.host.handle(
        this.server,
        msg.method as string,
        msg.params ?? {},
        controller.signal,
      );
      if (!controller.signal.aborted) this.options.serverSide.send({ jsonrpc: "2.0", id, result });
    } catch (e) {
      // A cancelled request gets no answer at all (JSON-RPC cancellation semantics).
      if (!controller.signal.aborted) this.options.serverSide.send({ jsonrpc: "2.0", id, error: toBrokerError(e) });
    } finally {
      this.running.delete(id);
    }
  }

  private end(side: "host" | "server"): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.running.values()) c.abort(new Error(`the ${side} went away`));
    for (const [id, done] of this.own)
      done({ jsonrpc: "2.0", id, error: { code: -32000, message: "connection closed" } });
    this.own.clear();
    this.options.hostSide.close();
    this.options.serverSide.close();
    for (const cb of this.closers) cb(side);
  }

  private log(line: string): void {
    this.options.log?.(`afs broker: ${line}`);
  }
}
