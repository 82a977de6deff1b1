// What one MCP session offers, whatever the protocol revision: the server's identity and
// instructions, the tools the profile lists, and a tools/call that answers with a result or an
// error result. server.ts serves it on 2025-11-25 (SDK v1), modern.ts on 2026-07-28 (SDK v2).
import type { WorkspaceBinding } from "../../access/binding.js";
import type { Limits } from "../../access/limits.js";
import type { Profile } from "../../access/profiles.js";
import type { NextStep } from "../../core/errors.js";
import { type Afs, VERSION } from "../../workspace/afs.js";
import { errorResult, nextStepsFor, type ToolResult } from "./errors.js";
import { inputJsonSchema, type ObjectJsonSchema, outputJsonSchema } from "./json-schema.js";
import { invokeTool, type Tool, type ToolAnnotations, type ToolContext, type TransportKind } from "./tool.js";
import { allowedFor, offeredBy } from "./tools.js";

export interface McpSessionOptions extends WorkspaceBinding {
  afs: Afs;
  profile: Profile;
  transport: TransportKind;
  limits: Limits;
  actor?: string;
}

export const SERVER_INFO = { name: "afs", title: "Agent filesystem", version: VERSION };

export const INSTRUCTIONS = `afs is a versioned filesystem: files live in workspaces, edits change the live state at once, and checkpoints are explicit snapshots.
All paths are absolute inside the workspace, e.g. /src/main.go.
- Use file_glob to find files by name, file_grep for exact text, file_query for a concept.
- Read before editing; prefer file_replace or file_patch over rewriting a whole file, and pass expected_sha256 from your read.
- Create a checkpoint before risky changes and after useful results (when the profile allows checkpoint tools).
- Do not restore a checkpoint unless the user wants the live state overwritten.`;

/** A tool as tools/list describes it (the same on every revision). */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectJsonSchema;
  outputSchema: ObjectJsonSchema;
  annotations: ToolAnnotations & { title: string };
}

// JSON Schemas are computed once per tool, not per tools/list.
const definitions = new Map<Tool, ListedTool>();
function definition(tool: Tool): ListedTool {
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

export interface SessionTools {
  /** What tools/list answers. */
  listed: ListedTool[];
  /** Whether the transport offers a tool of this name at all (else the call is a protocol error). */
  has(name: string): boolean;
  /** Runs a tool the transport offers: its result, or an error result for a refusal or failure. */
  call(name: string, args: unknown): Promise<ToolResult>;
  /** Where an error points next, in the words of the session's tools (errors.ts nextStepsFor). */
  steps: Partial<Record<NextStep, string>>;
}

export function sessionTools(options: McpSessionOptions): SessionTools {
  const ctx: ToolContext = { ...options };
  const offered = new Map(offeredBy(options.transport).map((t) => [t.name, t]));
  const allowed = allowedFor(options.profile, options.transport);
  const steps = nextStepsFor(new Set(allowed.map((t) => t.name)));
  return {
    listed: allowed.map(definition),
    steps,
    has: (name) => offered.has(name),
    async call(name, args) {
      const tool = offered.get(name);
      if (!tool) throw new Error(`sessionTools.call: ${name} is not offered; check has() first`);
      try {
        const { structured, text } = await invokeTool(ctx, tool, args);
        return { content: [{ type: "text", text }], structuredContent: structured };
      } catch (e) {
        return errorResult(e, steps, options.afs.settings.debug);
      }
    },
  };
}
