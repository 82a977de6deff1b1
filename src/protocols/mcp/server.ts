// Builds the MCP server for one session (stdio or one HTTP session) from the tool table: only the
// tools the profile allows are listed, anything else is refused with PERMISSION_DENIED.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { WorkspaceBinding } from "../../access/binding.js";
import type { Limits } from "../../access/limits.js";
import type { Profile } from "../../access/profiles.js";
import { type Afs, VERSION } from "../../workspace/afs.js";
import { errorResult, nextStepsFor } from "./errors.js";
import { inputJsonSchema, outputJsonSchema } from "./json-schema.js";
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
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator },
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
  return server;
}
