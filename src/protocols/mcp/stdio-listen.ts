// 2026-07-28's subscriptions/listen over stdio (afs mcp). The SDK's stdio entry owns the listen
// subscriptions and takes no event bus: it rewrites the change notifications the connection's one
// pinned server sends (sendResourceUpdated, sendResourceListChanged) onto the subscriptions whose
// filter asked for them, and drops them when none did. So a connection keeps one ResourceWatch
// (resources/watch.ts, as 2025-11-25's resources/subscribe does), fed with the URIs of each listen
// before the entry sees it: each URI is checked as a read would be (profile, a pinned workspace,
// the workspace and checkpoint exist), and a refused listen is answered with the JSON-RPC error
// here and never reaches the entry.
import type { JSONRPCMessage, RequestId, Server, Transport } from "@modelcontextprotocol/server";
import { rpcError } from "./errors.js";
import type { ResourceContext } from "./resources/context.js";
import { ResourceWatch } from "./resources/watch.js";

interface ListenRequest {
  id: RequestId;
  uris: string[];
  listChanged: boolean;
}

/** A subscriptions/listen request's id and what it watches, or null for any other message. */
function listenRequest(message: JSONRPCMessage): ListenRequest | null {
  if (!("method" in message) || message.method !== "subscriptions/listen" || !("id" in message)) return null;
  const notifications = (message.params as { notifications?: Record<string, unknown> } | undefined)?.notifications;
  const asked = notifications?.resourceSubscriptions;
  // A malformed filter is the entry's to refuse (-32602); only well-formed URIs are watched here.
  const uris = Array.isArray(asked) ? asked.filter((u): u is string => typeof u === "string") : [];
  return { id: message.id, uris, listChanged: notifications?.resourcesListChanged === true };
}

/** The listen request a `notifications/cancelled` ends, if any. */
function cancelledId(message: JSONRPCMessage): RequestId | undefined {
  if (!("method" in message) || message.method !== "notifications/cancelled" || "id" in message) return undefined;
  return (message.params as { requestId?: RequestId } | undefined)?.requestId;
}

/** One stdio connection's listen watches. */
export class StdioListens {
  readonly #watch: ResourceWatch;
  /** Listen id → the URIs it added. */
  readonly #subscriptions = new Map<RequestId, string[]>();
  /** URI → how many open listens watch it (a URI is dropped from the watch when none does). */
  readonly #counts = new Map<string, number>();
  #server: Server | null = null;

  constructor(ctx: ResourceContext) {
    const report = (sent: Promise<void> | undefined) => void sent?.catch(() => {});
    this.#watch = new ResourceWatch(ctx, {
      onUpdated: (uri) => report(this.#server?.sendResourceUpdated({ uri })),
      onListChanged: () => report(this.#server?.sendResourceListChanged()),
    });
  }

  /** The connection's pinned server, whose notifications the entry routes onto the subscriptions. */
  serving(server: Server): void {
    this.#server = server;
  }

  /**
   * Registers a listen's URIs before the entry opens it: null to pass the message on, else the
   * error response to answer it with. (A listen the entry itself then refuses, say for a bad
   * envelope, keeps its URIs watched until the connection ends; its notifications reach no one.)
   */
  async admit(message: JSONRPCMessage): Promise<JSONRPCMessage | null> {
    const cancelled = cancelledId(message);
    if (cancelled !== undefined) this.release(cancelled);
    const listen = listenRequest(message);
    if (!listen) return null;
    this.release(listen.id);
    const added: string[] = [];
    try {
      for (const uri of listen.uris) {
        await this.#watch.add(uri);
        added.push(uri);
        this.#counts.set(uri, (this.#counts.get(uri) ?? 0) + 1);
      }
      if (listen.listChanged) await this.#watch.watchList();
    } catch (e) {
      this.drop(added);
      const err = rpcError(e);
      return { jsonrpc: "2.0", id: listen.id, error: { code: err.code, message: err.message, data: err.data } };
    }
    this.#subscriptions.set(listen.id, added);
    return null;
  }

  close(): void {
    this.#watch.close();
    this.#subscriptions.clear();
    this.#counts.clear();
  }

  private release(id: RequestId): void {
    const uris = this.#subscriptions.get(id);
    if (!uris) return;
    this.#subscriptions.delete(id);
    this.drop(uris);
  }

  private drop(uris: readonly string[]): void {
    for (const uri of uris) {
      const n = (this.#counts.get(uri) ?? 0) - 1;
      if (n > 0) {
        this.#counts.set(uri, n);
      } else {
        this.#counts.delete(uri);
        this.#watch.remove(uri);
      }
    }
  }
}

/**
 * The transport the SDK's stdio entry reads: every inbound message passes `listens.admit` first,
 * one at a time and in order (a listen's check is asynchronous; nothing may overtake it).
 */
export class ListenGate implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #inbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly inner: Transport,
    private readonly listens: StdioListens,
  ) {
    inner.onclose = () => {
      listens.close();
      this.onclose?.();
    };
    inner.onerror = (e) => this.onerror?.(e);
    inner.onmessage = (message) => {
      this.#inbound = this.#inbound.then(async () => {
        const refusal = await this.listens.admit(message);
        if (refusal) await this.inner.send(refusal).catch((e: Error) => this.onerror?.(e));
        else this.onmessage?.(message);
      });
      // One failed message must not stall the ones behind it.
      this.#inbound = this.#inbound.catch((e: unknown) =>
        this.onerror?.(e instanceof Error ? e : new Error(String(e))),
      );
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
