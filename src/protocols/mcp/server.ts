// Builds the MCP server for one session (stdio or one HTTP session) from the tool table: only the
// tools the profile allows are listed, anything else is refused with PERMISSION_DENIED. Workspace
// files are resources (./resources/), subscribable where the transport keeps a stream (stdio).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Tool as McpTool,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { WorkspaceBinding } from "../../access/binding.js";
import type { Limits } from "../../access/limits.js";
import type { Profile } from "../../access/profiles.js";
import { type Afs, VERSION } from "../../workspace/afs.js";
import { errorResult, nextStepsFor, RpcError, rpcError } from "./errors.js";
import { inputJsonSchema, outputJsonSchema } from "./json-schema.js";
import { listResources, listResourceTemplates, ResourceWatch, readResource } from "./resources/index.js";
import { invokeTool, type Tool, type ToolContext, type TransportKind } from "./tool.js";
import { allowedFor, offeredBy } from "./tools.js";

export interface McpSessionOptions extends WorkspaceBinding {
  afs: Afs;
  profile: Profile;
  transport: TransportKind;
  limits: Limits;
  actor?: string;
}

const INSTRUCTIONS = `afs is a versioned filesystem: files live in workspaces, edits change the live state at once, and checkpoints are explicit snapshots.
All paths are absolute inside the workspace, e.g. /src/main.go.
- Use file_glob to find files by name, file_grep for exact text, file_query for a concept.
- Read before editing; prefer file_replace or file_patch over rewriting a whole file, and pass expected_sha256 from your read.
- Create a checkpoint before risky changes and after useful results (when the profile allows checkpoint tools).
- Do not restore a checkpoint unless the user wants the live state overwritten.`;

// JSON Schemas are computed once per tool, not per tools/list.
const definitions = new Map<Tool, McpTool>();
function definition(tool: Tool): McpTool {
  let def = definitions.get(tool);
  if (!def) {
    def = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool.input),
      outputSchema: outputJsonSchema(tool.output),
      annotations: { title: tool.title, ...tool.annotations },
    };
    definitions.set(tool, def);
  }
  return def;
}

// Every Server builds a fresh Ajv instance unless given one (~0.2 ms); afs serve builds a Server per
// HTTP request, so all of them share this one. (The SDK uses it only to check elicitation replies.)
const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function createMcpServer(options: McpSessionOptions): Server {
  const ctx: ToolContext = { ...options };
  const offered = new Map(offeredBy(options.transport).map((t) => [t.name, t]));
  const allowed = allowedFor(options.profile, options.transport);
  const listed = allowed.map(definition);
  const steps = nextStepsFor(new Set(allowed.map((t) => t.name)));

  const server = new Server(
    { name: "afs", title: "Agent filesystem", version: VERSION },
    {
      capabilities: { tools: {}, resources: STREAMED[options.transport] ? { subscribe: true, listChanged: true } : {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = offered.get(request.params.name);
    // An unknown name is a protocol error (the spec's -32602); a known but withheld tool is a refusal.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    try {
      const { structured, text } = await invokeTool(ctx, tool, request.params.arguments);
      return { content: [{ type: "text", text }], structuredContent: structured };
    } catch (e) {
      return errorResult(e, steps, options.afs.settings.debug);
    }
  });
  registerResources(server, options, steps);
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
function registerResources(server: Server, options: McpSessionOptions, steps: ReturnType<typeof nextStepsFor>): void {
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
