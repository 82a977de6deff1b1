// The MCP server on protocol revision 2025-11-25 and earlier (the `initialize` handshake), built
// per session (stdio, or one HTTP request) with the official SDK v1: only the tools the profile
// allows are listed, anything else is refused with PERMISSION_DENIED. Workspace files are resources
// (./resources/), subscribable where the transport keeps a stream (stdio). modern.ts serves the
// same session on 2026-07-28.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { RpcError, rpcError } from "./errors.js";
import { listResources, listResourceTemplates, ResourceWatch, readResource } from "./resources/index.js";
import { INSTRUCTIONS, type McpSessionOptions, SERVER_INFO, type SessionTools, sessionTools } from "./session.js";
import type { TransportKind } from "./tool.js";

export type { McpSessionOptions } from "./session.js";

// Every Server builds a fresh Ajv instance unless given one (~0.2 ms); afs serve builds a Server per
// HTTP request, so all of them share this one. (The SDK uses it only to check elicitation replies.)
const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function createMcpServer(options: McpSessionOptions): Server {
  const tools = sessionTools(options);
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, resources: STREAMED[options.transport] ? { subscribe: true, listChanged: true } : {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.listed }));
  server.setRequestHandler(CallToolRequestSchema, (request): Promise<CallToolResult> => {
    // An unknown name is a protocol error (the spec's -32602); a known but withheld tool is a refusal.
    if (!tools.has(request.params.name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    }
    return tools.call(request.params.name, request.params.arguments);
  });
  registerResources(server, options, tools.steps);
  return server;
}

/**
 * Whether a transport keeps a stream to the client for notifications. afs serve answers each POST
 * on its own and closes it, so over HTTP subscriptions are 2026-07-28's subscriptions/listen.
 */
const STREAMED: Readonly<Record<TransportKind, boolean>> = { stdio: true, http: false };

const NO_STREAM =
  "resources/subscribe needs a lasting connection and afs serve answers each POST on its own: subscribe over stdio (afs mcp), or use subscriptions/listen (protocol 2026-07-28)";

/** The 2025-11-25 resource methods over ./resources/; every failure is one JSON-RPC error (rpcError). */
function registerResources(server: Server, options: McpSessionOptions, steps: SessionTools["steps"]): void {
  const guard =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (e) {
        throw rpcError(e, steps);
      }
    };
  const watch = STREAMED[options.transport]
    ? new ResourceWatch(options, {
        onUpdated: (uri) => void server.sendResourceUpdated({ uri }).catch(() => undefined),
        onListChanged: () => void server.sendResourceListChanged().catch(() => undefined),
      })
    : null;
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => {
    const { resourceTemplates } = listResourceTemplates();
    return { resourceTemplates };
  });
  server.setRequestHandler(
    ListResourcesRequestSchema,
    guard(async (request) => {
      const { cache: _, ...page } = await listResources(options, request.params?.cursor);
      await watch?.watchList();
      return page;
    }),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    guard(async (request) => ({ contents: (await readResource(options, request.params.uri)).contents })),
  );
  server.setRequestHandler(
    SubscribeRequestSchema,
    guard(async (request) => {
      if (!watch) throw new RpcError(ErrorCode.MethodNotFound, NO_STREAM, { code: "INVALID_ARGUMENT" });
      await watch.add(request.params.uri);
      return {};
    }),
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    guard(async (request) => {
      watch?.remove(request.params.uri);
      return {};
    }),
  );
  if (watch) {
    // Chained, not replaced: afs mcp sets its own onclose after this.
    const closing = server.onclose;
    server.onclose = () => {
      watch.close();
      closing?.();
    };
  }
}
