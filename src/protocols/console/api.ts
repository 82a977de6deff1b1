// The console's JSON API: who the session is, and one endpoint per MCP tool (POST
// /api/tools/NAME with the tool's arguments as the body). The page calls exactly the operations an
// agent calls, under the same profile and workspace pin, so there is no second implementation.
import type { IncomingMessage, ServerResponse } from "node:http";
import { leavesPin } from "../../access/binding.js";
import type { Limits } from "../../access/limits.js";
import { AfsError } from "../../core/errors.js";
import { type Afs, VERSION } from "../../workspace/afs.js";
import type { AuthMode, Session } from "../mcp/http/auth.js";
import { invokeTool, type Tool } from "../mcp/tool.js";
import { allowedFor, offeredBy } from "../mcp/tools.js";
import { sendError, sendJson, sendRefusal } from "./errors.js";

export interface ApiConfig {
  afs: Afs;
  limits: Limits;
  auth: AuthMode;
}

const TOOLS = new Map<string, Tool>(offeredBy("http").map((t) => [t.name, t]));

/** GET /api/session: what the page may show and offer. */
export function sendSession(config: ApiConfig, session: Session, res: ServerResponse): void {
  sendJson(res, 200, {
    version: VERSION,
    auth: config.auth,
    profile: session.profile,
    workspace: session.workspace,
    pinned: session.pinned,
    actor: session.actor ?? null,
    tools: allowedFor(session.profile, "http").map((t) => t.name),
  });
}

/** POST /api/tools/NAME. */
export async function callTool(
  config: ApiConfig,
  session: Session,
  name: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const tool = TOOLS.get(name);
  if (!tool) return sendRefusal(res, 404, "NOT_FOUND", `no tool named ${name}`);
  try {
    const args = await readJson(req, config.limits.maxHttpBodyBytes);
    const workspace =
      typeof args === "object" && args !== null ? (args as { workspace?: unknown }).workspace : undefined;
    if (leavesPin(session, workspace)) {
      throw new AfsError("PERMISSION_DENIED", `this token is for workspace ${session.workspace}, not ${workspace}`);
    }
    const ctx = { afs: config.afs, limits: config.limits, transport: "http" as const, ...session };
    const { structured } = await invokeTool(ctx, tool, args);
    sendJson(res, 200, structured);
  } catch (e) {
    sendError(res, e, config.afs.settings.debug);
  }
}

/** The body as JSON (an empty body is `{}`), refused past `limit` bytes. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new AfsError("QUOTA_EXCEEDED", `request body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AfsError("INVALID_ARGUMENT", "the request body is not JSON");
  }
}
