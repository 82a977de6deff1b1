// The MCP server on protocol revision 2026-07-28 (stateless: `server/discover`, the protocol
// version and client capabilities in each request's `_meta`, `resultType` and caching hints on
// results), built with the official SDK v2 per HTTP request or per stdio connection from the
// same session core as the 2025-11-25 server (session.ts). The SDK owns the wire: the envelope
// and header checks, discovery, result stamping, subscriptions/listen.
//
// Each surface (the tools here; resources beside them) registers its handlers and declares its
// capability and cache hints in SURFACES, so adding one is one entry.
import {
  type CacheHint,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  Server,
  type ServerCapabilities,
} from "@modelcontextprotocol/server";
import { rpcError } from "./errors.js";
import { listResources, listResourceTemplates, readResource } from "./resources/index.js";
import { INSTRUCTIONS, type McpSessionOptions, SERVER_INFO, type SessionTools, sessionTools } from "./session.js";
import type { TransportKind } from "./tool.js";

/** Methods whose 2026-07-28 results carry `ttlMs` / `cacheScope`. */
type CacheableMethod =
  | "tools/list"
  | "prompts/list"
  | "resources/list"
  | "resources/templates/list"
  | "resources/read"
  | "server/discover";

/** One part of what a session offers on 2026-07-28. */
export interface ModernSurface {
  /** What the surface declares on a transport. */
  capabilities(transport: TransportKind): ServerCapabilities;
  cacheHints: Partial<Record<CacheableMethod, CacheHint>>;
  /** `tools`: the session's tools (its listing and the next steps its errors name), built once. */
  register(server: Server, options: McpSessionOptions, tools: SessionTools): void;
}

// A session's tool list is fixed by its profile and transport for the server's lifetime; it is
// the caller's own (a token's profile), so shared caches must not keep it.
const LIST_TTL_MS = 5 * 60_000;

export const toolSurface: ModernSurface = {
  capabilities: () => ({ tools: {} }),
  cacheHints: {
    "tools/list": { ttlMs: LIST_TTL_MS, cacheScope: "private" },
    "server/discover": { ttlMs: LIST_TTL_MS, cacheScope: "private" },
  },
  register(server, _options, tools) {
    server.setRequestHandler("tools/list", () => ({ tools: tools.listed }));
    server.setRequestHandler("tools/call", (request) => {
      // An unknown name is a protocol error (-32602); a known but withheld tool is a refusal.
      if (!tools.has(request.params.name)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      }
      return tools.call(request.params.name, request.params.arguments);
    });
  },
};

/**
 * Workspace files as resources (./resources/): templates, a paged list and reads, each result with
 * the caching hint its function returns. Every failure is one JSON-RPC error (rpcError): a missing
 * file is -32602 with the URI in `data.uri`. Change notifications come on subscriptions/listen,
 * which the SDK's entries own: over HTTP from afs serve's bus (resources/listen-bus.ts), over stdio
 * from the connection's watch through its pinned server (stdio-listen.ts).
 */
export const resourceSurface: ModernSurface = {
  capabilities: () => ({ resources: { subscribe: true, listChanged: true } }),
  cacheHints: {},
  register(server, options, tools) {
    const fail = (e: unknown, uri?: string) => {
      const err = rpcError(e, tools.steps);
      if (uri !== undefined) Object.assign(err.data, { uri });
      return err;
    };
    server.setRequestHandler("resources/templates/list", () => {
      const { resourceTemplates, cache } = listResourceTemplates();
      return { resourceTemplates: [...resourceTemplates], ...cache };
    });
    server.setRequestHandler("resources/list", async (request) => {
      try {
        const { cache, ...page } = await listResources(options, request.params?.cursor);
        return { ...page, ...cache };
      } catch (e) {
        throw fail(e);
      }
    });
    server.setRequestHandler("resources/read", async (request) => {
      try {
        const { contents, cache } = await readResource(options, request.params.uri);
        // ResourceMeta is an interface (no index signature); the wire type wants a record.
        const wire = contents.map((c) => ({ ...c, _meta: { ...c._meta } as Record<string, unknown> }));
        return { contents: wire as ReadResourceResult["contents"], ...cache };
      } catch (e) {
        throw fail(e, request.params.uri);
      }
    });
  },
};

/** What a 2026-07-28 session offers, in registration order. */
export const SURFACES: readonly ModernSurface[] = [toolSurface, resourceSurface];

export function createModernServer(options: McpSessionOptions, surfaces: readonly ModernSurface[] = SURFACES): Server {
  const capabilities: ServerCapabilities = {};
  const cacheHints: ModernSurface["cacheHints"] = {};
  for (const s of surfaces) {
    Object.assign(capabilities, s.capabilities(options.transport));
    Object.assign(cacheHints, s.cacheHints);
  }
  const server = new Server(SERVER_INFO, { capabilities, instructions: INSTRUCTIONS, cacheHints });
  const tools = sessionTools(options);
  for (const s of surfaces) s.register(server, options, tools);
  return server;
}
