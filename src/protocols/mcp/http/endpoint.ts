// POST /mcp: one stateless Streamable HTTP exchange per request. The body is read under the size
// cap, tool calls outside the session's scope get 403 before anything runs, and a fresh MCP server
// for the session answers the rest (so revocation and expiry apply to the very next request).
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { leavesPin } from "../../../access/binding.js";
import type { Limits } from "../../../access/limits.js";
import { allows } from "../../../access/profiles.js";
import type { Afs } from "../../../workspace/afs.js";
import { createMcpServer } from "../server.js";
import { offeredBy } from "../tools.js";
import type { Session } from "./auth.js";
import { rpcError } from "./replies.js";

export interface EndpointConfig {
  afs: Afs;
  limits: Limits;
  /** WWW-Authenticate value for a 403 (insufficient_scope), given the reason. */
  forbidden: (reason: string) => string;
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

  const server = createMcpServer({ afs: config.afs, limits: config.limits, transport: "http", ...session });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
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
