// `afs mcp` on both protocol revisions over one stdio connection. The opening message picks the
// era, by the SDK's own classifier: an `initialize` (or any request without the 2026-07-28
// `_meta` envelope) starts the 2025-11-25 session on the SDK v1 server, exactly as before; a
// request carrying the envelope (`server/discover`, or any other) goes to the SDK v2 stdio
// entry, which serves 2026-07-28 (and its subscriptions/listen, stdio-listen.ts) for the rest of
// the connection.
import type { Transport as V1Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { classifyInboundRequest, type JSONRPCMessage, type Transport } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import type { McpSessionOptions } from "./session.js";

export interface StdioServing {
  /** The era the opening message chose, once it has arrived. */
  era: Promise<"legacy" | "modern">;
  /** Settles when the connection ends (end of stdin, the host closing stdout, or close()). */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves the session on this process's stdin and stdout. */
export function serveStdioBothEras(options: McpSessionOptions): StdioServing {
  const wire = new StdioServerTransport();
  const opening = new OpeningReplay(wire);
  const closed = new Promise<void>((resolve) => {
    wire.onclose = () => {
      opening.onclose?.();
      resolve();
    };
  });
  wire.onerror = (e) => opening.onerror?.(e);
  const era = opening.first.then(async (message) => {
    const route = classifyInboundRequest({ httpMethod: "POST", body: message });
    // Only the chosen revision's server is loaded: a session never needs both SDKs' servers.
    if (route.kind === "legacy") {
      const { createMcpServer } = await import("./server.js");
      // SDK v1 and v2 share the Transport contract; only their message types are nominally apart.
      await createMcpServer(options).connect(opening as unknown as V1Transport);
      return "legacy" as const;
    }
    const { createModernServer } = await import("./modern.js");
    const { ListenGate, StdioListens } = await import("./stdio-listen.js");
    // subscriptions/listen: the entry routes the pinned server's change notifications onto the
    // open subscriptions; the gate checks and watches each listen's URIs before the entry sees it.
    const listens = new StdioListens(options);
    serveStdio(
      () => {
        const server = createModernServer(options);
        listens.serving(server);
        return server;
      },
      {
        transport: new ListenGate(opening, listens),
        legacy: "reject",
        onerror: (e) => {
          if (options.afs.settings.debug) process.stderr.write(`afs mcp: ${e.stack ?? e.message}\n`);
        },
      },
    );
    return "modern" as const;
  });
  void wire.start();
  return { era, closed, close: () => wire.close() };
}

/**
 * The stdio wire, started at once so the opening message can be read, then handed to whichever
 * server the opening chose: that server's start() replays every message held so far, in order.
 */
class OpeningReplay implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly first: Promise<JSONRPCMessage>;
  private readonly held: JSONRPCMessage[] = [];
  private live = false;

  constructor(private readonly wire: StdioServerTransport) {
    let arrived: (m: JSONRPCMessage) => void = () => {};
    this.first = new Promise((resolve) => {
      arrived = resolve;
    });
    wire.onmessage = (message) => {
      if (this.live) return this.onmessage?.(message);
      this.held.push(message);
      if (this.held.length === 1) arrived(message);
    };
  }

  async start(): Promise<void> {
    // After the server has finished connecting, so it is ready for the held messages.
    queueMicrotask(() => {
      while (this.held.length > 0) this.onmessage?.(this.held.shift() as JSONRPCMessage);
      this.live = true;
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.wire.send(message);
  }

  close(): Promise<void> {
    return this.wire.close();
  }
}
