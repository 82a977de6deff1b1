// The MCP server on protocol revision 2025-11-25 and earlier (the `initialize` handshake), built
// per session (stdio, or one HTTP request) with the official SDK v1: only the tools the profile
// allows are listed, anything else is refused with PERMISSION_DENIED. modern.ts serves the same
// session on 2026-07-28.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { INSTRUCTIONS, type McpSessionOptions, SERVER_INFO, sessionTools } from "./session.js";

export type { McpSessionOptions } from "./session.js";

// Every Server builds a fresh Ajv instance unless given one (~0.2 ms); afs serve builds a Server per
// HTTP request, so all of them share this one. (The SDK uses it only to check elicitation replies.)
const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function createMcpServer(options: McpSessionOptions): Server {
  const tools = sessionTools(options);
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
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
  return server;
}
