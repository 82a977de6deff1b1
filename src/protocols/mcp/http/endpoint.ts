// POST /mcp: one stateless Streamable HTTP exchange per request. The body is read under the size
// cap, tool calls outside the session's scope get 403 before anything runs, and a fresh MCP server
// for the session answers the rest (so revocation and expiry apply to the very next request).
// The SDK's own classifier picks the revision per request: a message carrying the 2026-07-28
// `_meta` envelope goes to the SDK v2 handler (modern.ts), anything else (an `initialize`, a
// claim-less request) to the 2025-11-25 server on SDK v1, as before.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { leavesPin } from "../../../access/binding.js";
import type { Limits } from "../../../access/limits.js";
import { allows } from "../../../access/profiles.js";
import type { Afs } from "../../../workspace/afs.js";
import { asAfsError } from "../errors.js";
import { createModernServer } from "../modern.js";
import { authorize, listedWorkspace } from "../resources/context.js";
import { ListenBus } from "../resources/listen-bus.js";
import { createMcpServer } from "../server.js";
import { offeredBy } from "../tools.js";
import type { Session } from "./auth.js";
import { rpcError } from "./replies.js";

export interface EndpointConfig {
  afs: Afs;
  limits: Limits;
  /** The 2026-07-28 handlers (see modernHandlers). */
  modern: ModernHandlers;
  /** WWW-Authenticate value for a 403 (insufficient_scope), given the reason. */
  forbidden: (reason: string) => string;
}

/** The session rides to the per-request server factory in the SDK's pass-through authInfo. */
type SessionAuth = AuthInfo & { extra: { session: Session } };

/** The 2026-07-28 handlers: one per listed workspace, each with the bus its listen streams read. */
export interface ModernHandlers {
  /** The handler for sessions whose resources/list shows `listed` (null: none, or not a listen). */
  for(listed: string | null): { handler: McpHttpHandler; bus: ListenBus };
  close(): Promise<void>;
}

/**
 * The SDK v2 handlers that answer 2026-07-28 requests (`legacy: 'reject'`: afs routes 2025-era
 * traffic to its v1 server itself). A fresh server per request, built for the request's session.
 * The SDK sends `resources_list_changed` to every listen stream of a bus, so each listed workspace
 * has its own bus (and handler): a stream hears only of its own workspace's list changing.
 */
export function modernHandlers(afs: Afs, limits: Limits): ModernHandlers {
  const made = new Map<string | null, { handler: McpHttpHandler; bus: ListenBus }>();
  const make = (listed: string | null) => {
    const bus = new ListenBus(afs, listed);
    const handler = createMcpHandler(
      (ctx) => {
        const session = (ctx.authInfo as SessionAuth | undefined)?.extra.session;
        if (!session) throw new Error("modernHandlers: a request reached the MCP handler without a session");
        return createModernServer({ afs, limits, transport: "http", ...session });
      },
      {
        legacy: "reject",
        bus,
        maxRequestBodySize: limits.maxHttpBodyBytes,
        onerror: (e) => {
          if (afs.settings.debug) process.stderr.write(`afs serve: ${e.stack ?? e.message}\n`);
        },
      },
    );
    return { handler, bus };
  };
  return {
    for(listed) {
      const pair = made.get(listed) ?? make(listed);
      made.set(listed, pair);
      return pair;
    },
    close: async () => {
      await Promise.all([...made.values()].map((m) => m.handler.close()));
    },
  };
}

const HTTP_TOOLS = new Map(offeredBy("http").map((t) => [t.name, t]));

export async function handleMcp(config: EndpointConfig, session: Session, req: IncomingMessage, res: ServerResponse) {
  if (req.method !== "POST") {
    rpcError(res, 405, "afs serve is stateless: POST JSON-RPC messages to /mcp (no SSE stream, no sessions)", {
      Allow: "POST",
    });
    return;
  }
  const body = await readBody(req, config.limits.maxHttpBodyBytes);
  if (body === null) {
    rpcError(res, 413, `request body is larger than ${config.limits.maxHttpBodyBytes} bytes`, { Connection: "close" });
    req.destroy();
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    rpcError(res, 400, "Parse error: the body is not JSON", {}, -32700);
    return;
  }
  const outOfScope = scopeProblem(session, parsed);
  if (outOfScope !== null) {
    rpcError(res, 403, outOfScope, { "WWW-Authenticate": config.forbidden(outOfScope) });
    return;
  }

  const header = (name: string): string | undefined => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(", ") : v;
  };
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: header("mcp-protocol-version"),
    mcpMethodHeader: header("mcp-method"),
    mcpNameHeader: header("mcp-name"),
    body: parsed,
  });
  if (route.kind !== "legacy") {
    const listened = await listenedUris(config, session, parsed);
    if ("refused" in listened) {
      const { status, message } = listened.refused;
      const headers: Record<string, string> = status === 403 ? { "WWW-Authenticate": config.forbidden(message) } : {};
      rpcError(res, status, message, headers, status === 403 ? -32000 : -32602);
      return;
    }
    const { handler, bus } = config.modern.for(listened.listed);
    const release = bus.watch(listened.uris);
    res.once("close", release);
    return serveModern(handler, session, req, res, body, parsed);
  }

  const server = createMcpServer({ afs: config.afs, limits: config.limits, transport: "http", ...session });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}

/** One 2026-07-28 exchange: the SDK's web-standard handler, bridged to node:http. */
async function serveModern(
  handler: McpHttpHandler,
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  parsed: unknown,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  // A client that goes away cancels its exchange (and ends a subscriptions/listen stream).
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/mcp"}`, {
    method: "POST",
    headers,
    body: new Uint8Array(body),
    signal: gone.signal,
  });
  const authInfo: SessionAuth = {
    token: "",
    clientId: session.actor ?? "local",
    scopes: [session.profile],
    extra: { session },
  };
  const response = await handler.fetch(request, { parsedBody: parsed, authInfo });
  const replyHeaders = Object.fromEntries(response.headers);
  // An SSE stream (subscriptions/listen, a call that notifies) is passed on as it comes; anything
  // else is one JSON body, sent whole with its length.
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
    const whole = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, { ...replyHeaders, "Content-Length": whole.length });
    res.end(whole);
    return;
  }
  res.writeHead(response.status, replyHeaders);
  const stream = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  res.once("close", () => stream.destroy());
  try {
    for await (const chunk of stream) res.write(chunk);
  } catch (e) {
    // The client closing a stream it no longer wants (a subscription) is how such streams end.
    if (!res.destroyed) throw e;
  }
  res.end();
}

/**
 * The live-file URIs a subscriptions/listen asks to watch, each checked as a read of it would be
 * (profile, a pinned token's workspace, the workspace exists; the file may appear later), so a
 * stream never hears of files its token could not read. Checkpoint URIs never change: not watched.
 * `listed`: the workspace whose list a listen stream hears about (null when it hears of none).
 */
async function listenedUris(
  config: EndpointConfig,
  session: Session,
  parsed: unknown,
): Promise<
  | { uris: { uri: string; workspace: string; path: string }[]; listed: string | null }
  | { refused: { status: number; message: string } }
> {
  const uris: { uri: string; workspace: string; path: string }[] = [];
  let listed: string | null = null;
  const ctx = { afs: config.afs, limits: config.limits, ...session };
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const m = message as {
      method?: unknown;
      params?: { notifications?: { resourceSubscriptions?: unknown; resourcesListChanged?: unknown } };
    };
    if (m?.method !== "subscriptions/listen") continue;
    // A profile without file reads lists nothing, and so hears of no list changing.
    if (m.params?.notifications?.resourcesListChanged === true) listed = await listedWorkspace(ctx).catch(() => null);
    const asked = m.params?.notifications?.resourceSubscriptions;
    if (!Array.isArray(asked)) continue;
    for (const uri of asked) {
      try {
        const a = await authorize(ctx, String(uri));
        if (a.checkpoint === null) uris.push({ uri: String(uri), workspace: a.workspace, path: a.path });
      } catch (e) {
        const err = asAfsError(e);
        return { refused: { status: err.code === "PERMISSION_DENIED" ? 403 : 400, message: `${uri}: ${err.message}` } };
      }
    }
  }
  return { uris, listed };
}

/** The first tools/call the session may not make (a tool outside its profile, another workspace). */
function scopeProblem(session: Session, parsed: unknown): string | null {
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const call = toolCall(message);
    if (!call) continue;
    const tool = HTTP_TOOLS.get(call.name);
    if (tool && !allows(session.profile, tool)) {
      return `${call.name} is outside this token's scope (profile ${session.profile})`;
    }
    if (leavesPin(session, call.workspace)) {
      return `this token is for workspace ${session.workspace}, not ${call.workspace}`;
    }
  }
  return null;
}

function toolCall(message: unknown): { name: string; workspace: unknown } | null {
  if (typeof message !== "object" || message === null) return null;
  const m = message as { method?: unknown; params?: { name?: unknown; arguments?: { workspace?: unknown } } };
  if (m.method !== "tools/call" || typeof m.params?.name !== "string") return null;
  return { name: m.params.name, workspace: m.params.arguments?.workspace };
}

/** The whole body, or null as soon as it passes `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
