// The console at `/` of `afs serve`: the page's assets and the JSON API behind it. Tokens arrive
// once (POST /api/login) and live in an HttpOnly cookie; every API request is authenticated as
// /mcp is, and state-changing ones must come from a page this server served (Origin), so another
// site cannot ride a signed-in browser.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Limits } from "../../access/limits.js";
import type { Afs } from "../../workspace/afs.js";
import { type AuthConfig, authenticateBearer, refusalMessage } from "../mcp/http/auth.js";
import { callTool, readJson, sendSession } from "./api.js";
import { consoleAssets } from "./assets.js";
import { clearedCookie, cookieToken, sessionCookie } from "./cookie.js";
import { sendJson, sendRefusal } from "./errors.js";
import { streamEvents } from "./events.js";
import { SECURITY_HEADERS } from "./headers.js";

export interface ConsoleConfig {
  afs: Afs;
  limits: Limits;
  auth: AuthConfig;
  /** Whether the console is reached over https (the cookie is then Secure). */
  secure: (req: IncomingMessage) => boolean;
}

const TOOL_PATH = /^\/api\/tools\/([a-z0-9_]+)$/;

export async function handleConsole(config: ConsoleConfig, req: IncomingMessage, res: ServerResponse, url: URL) {
  const path = url.pathname;
  if (!path.startsWith("/api/")) return sendAsset(req, res, path);
  const method = req.method ?? "GET";
  if (
    method !== "GET" &&
    method !== "HEAD" &&
    req.headers.origin === undefined &&
    req.headers.authorization === undefined
  ) {
    // Browsers send Origin with every POST; the host guard already refused a foreign one. A cookie
    // request without it did not come from a page of ours.
    return sendRefusal(res, 403, "PERMISSION_DENIED", "state-changing requests must carry an Origin header");
  }
  if (path === "/api/login" && method === "POST") return login(config, req, res);
  if (path === "/api/logout" && method === "POST") {
    return sendJson(res, 200, { signed_out: true }, { "Set-Cookie": clearedCookie() });
  }
  const header = req.headers.authorization ?? bearer(cookieToken(req));
  const who = await authenticateBearer(config.auth, header);
  if (!who.ok) return sendRefusal(res, 401, "PERMISSION_DENIED", refusalMessage(who.refusal));
  const session = who.session;
  const api = { afs: config.afs, limits: config.limits, auth: config.auth.mode };
  if (path === "/api/session" && method === "GET") return sendSession(api, session, res);
  if (path === "/api/events" && method === "GET") return streamEvents(config.afs, session, url, req, res);
  const tool = TOOL_PATH.exec(path);
  if (tool && method === "POST") return callTool(api, session, tool[1] as string, req, res);
  return sendRefusal(res, 404, "NOT_FOUND", `no console API at ${method} ${path}`);
}

const bearer = (token: string | undefined): string | undefined => (token === undefined ? undefined : `Bearer ${token}`);

/** POST /api/login {token}: checks the token and keeps it in the session cookie. */
async function login(config: ConsoleConfig, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let token: unknown;
  try {
    token = ((await readJson(req, 64 * 1024)) as { token?: unknown }).token;
  } catch {
    token = undefined;
  }
  if (typeof token !== "string" || token.trim() === "") {
    return sendRefusal(res, 400, "INVALID_ARGUMENT", 'send {"token": "<afs token>"}; issue one with: afs token issue');
  }
  const who = await authenticateBearer(config.auth, bearer(token.trim()));
  if (!who.ok) return sendRefusal(res, 401, "PERMISSION_DENIED", refusalMessage(who.refusal));
  sendJson(res, 200, { signed_in: true }, { "Set-Cookie": sessionCookie(token.trim(), config.secure(req)) });
}

function sendAsset(req: IncomingMessage, res: ServerResponse, path: string) {
  const assets = consoleAssets();
  if (assets === null) {
    return sendRefusal(
      res,
      503,
      "INTERNAL",
      "the console's assets are not built; run npm run build in the afs package",
    );
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    return sendRefusal(res, 405, "INVALID_ARGUMENT", `${req.method} ${path}: the console's pages are read with GET`);
  }
  // Every page path is the one app (deep links); only /assets/… name files.
  const asset = path.startsWith("/assets/") ? assets.get(path) : assets.get("/index.html");
  if (!asset) return sendRefusal(res, 404, "NOT_FOUND", `no console asset at ${path}`);
  const accepted = String(req.headers["accept-encoding"] ?? "");
  const [body, encoding] = /\bbr\b/.test(accepted)
    ? [asset.br, "br"]
    : /\bgzip\b/.test(accepted)
      ? [asset.gzip, "gzip"]
      : [asset.body, undefined];
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": asset.type,
    "Content-Length": body.length,
    "Cache-Control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    Vary: "Accept-Encoding",
    ...(encoding ? { "Content-Encoding": encoding } : {}),
  });
  res.end(req.method === "HEAD" ? undefined : body);
}
