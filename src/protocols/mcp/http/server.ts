// `afs serve`: the HTTP server. Every request passes the Host/Origin guard; /mcp also needs a
// bearer token (unless --auth none on loopback); the RFC 9728 metadata says how to get one. Every
// other path is the web console (src/protocols/console), its API under the same tokens.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Limits } from "../../../access/limits.js";
import { PROFILES, type Profile } from "../../../access/profiles.js";
import { AfsError, type ErrorCode } from "../../../core/errors.js";
import type { Afs } from "../../../workspace/afs.js";
import { type ConsoleConfig, handleConsole } from "../../console/handler.js";
import { type AuthMode, authenticate, challenge, refusalMessage } from "./auth.js";
import { handleMcp, modernHandlers } from "./endpoint.js";
import { hostPolicy, isLoopback, refuseHost } from "./host-guard.js";
import { json, rpcError } from "./replies.js";

export interface ServeOptions {
  afs: Afs;
  host: string;
  port: number;
  auth: AuthMode;
  /** The session of every request with --auth none. */
  profile: Profile;
  workspace: string | null;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** How clients reach the server (behind a proxy); default http://<Host header>. */
  publicUrl?: string;
  limits: Limits;
}

export interface Serving {
  /** The /mcp endpoint as bound, e.g. http://127.0.0.1:8091/mcp. */
  url: string;
  /** The console as bound, e.g. http://127.0.0.1:8091/. */
  consoleUrl: string;
  close(): Promise<void>;
  closed: Promise<void>;
}

const METADATA_PATH = "/.well-known/oauth-protected-resource";

/**
 * The HTTP status of an AfsError thrown before MCP answers (the token lookup reads the store): a
 * store that is down or slow is temporary (503, retry), anything else is a bug (500).
 */
const STATUS_BEFORE_MCP: Partial<Record<ErrorCode, number>> = { IO_ERROR: 503, TIMEOUT: 503 };

export async function serveHttp(options: ServeOptions): Promise<Serving> {
  if (options.auth === "none" && !isLoopback(options.host)) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `--auth none serves without authentication and is only allowed on a loopback address (127.0.0.1, ::1, localhost), not ${options.host}; bind to loopback or use tokens`,
    );
  }
  const policy = hostPolicy(options.host, options.allowedHosts, options.allowedOrigins);
  const auth = {
    mode: options.auth,
    tokens: options.afs.tokens,
    local: { profile: options.profile, workspace: options.workspace, pinned: false },
  };
  const consoleConfig: ConsoleConfig = {
    afs: options.afs,
    limits: options.limits,
    auth,
    secure: (req) => (options.publicUrl ?? "").startsWith("https:") || req.headers["x-forwarded-proto"] === "https",
  };
  const base = (req: IncomingMessage): string =>
    (options.publicUrl ?? `http://${req.headers.host}`).replace(/\/+$/, "");
  const metadataUrl = (req: IncomingMessage): string => `${base(req)}${METADATA_PATH}/mcp`;
  const modern = modernHandlers(options.afs, options.limits);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = refuseHost(policy, req);
    if (refused !== null) return rpcError(res, 403, refused);
    const path = new URL(req.url ?? "/", "http://afs").pathname;
    if (path === METADATA_PATH || path === `${METADATA_PATH}/mcp`) {
      return json(res, 200, {
        resource: `${base(req)}/mcp`,
        resource_name: "afs",
        bearer_methods_supported: ["header"],
        scopes_supported: PROFILES,
      });
    }
    if (path !== "/mcp") return handleConsole(consoleConfig, req, res, new URL(req.url ?? "/", "http://afs"));
    const who = await authenticate(auth, req);
    if (!who.ok) {
      return rpcError(res, 401, refusalMessage(who.refusal), {
        "WWW-Authenticate": challenge(metadataUrl(req), who.refusal),
      });
    }
    const forbidden = (reason: string): string =>
      `Bearer realm="afs", error="insufficient_scope", error_description="${reason.replace(/"/g, "'")}", resource_metadata="${metadataUrl(req)}"`;
    await handleMcp({ afs: options.afs, limits: options.limits, modern, forbidden }, who.session, req, res);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const status = e instanceof AfsError ? STATUS_BEFORE_MCP[e.code] : undefined;
      if (e instanceof AfsError && status !== undefined) {
        // Said to the client, not logged: the store already logs losing and regaining its server.
        if (!res.headersSent) {
          const error = { code: -32603, message: `${e.code}: ${e.message}`, data: { code: e.code } };
          json(res, status, { jsonrpc: "2.0", error, id: null }, { "Retry-After": "1" });
        } else res.end();
        return;
      }
      process.stderr.write(`afs serve: ${(e instanceof Error && e.stack) || String(e)}\n`);
      if (!res.headersSent) rpcError(res, 500, "internal error; see the server's log", {}, -32603);
      else res.end();
    });
  });
  await listen(server, options.port, options.host);
  const { port } = server.address() as AddressInfo;
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  const closed = new Promise<void>((resolve) => server.once("close", () => resolve()));
  return {
    url: `http://${shown}:${port}/mcp`,
    consoleUrl: `http://${shown}:${port}/`,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        void modern.close();
      }),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? new AfsError("IO_ERROR", `port ${port} on ${host} is in use; pick another with --port`)
          : e,
      ),
    );
    server.listen(port, host, () => resolve());
  });
}
