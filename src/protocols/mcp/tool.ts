// What one MCP tool is: its name, family, model-facing description, input and output schemas,
// annotations, and a handler over the engine. The stdio and HTTP servers read these and nothing else.
import { z } from "zod";
import { type WorkspaceBinding, workspaceForCall } from "../../access/binding.js";
import { checkWriteArgs, type Limits } from "../../access/limits.js";
import { checkAllowed, type Profile, type ToolFamily } from "../../access/profiles.js";
import type { Afs } from "../../workspace/afs.js";

export type TransportKind = "stdio" | "http";

/** Everything a handler may use: the engine, the session's workspace binding, profile and limits. */
export interface ToolContext extends WorkspaceBinding {
  afs: Afs;
  profile: Profile;
  transport: TransportKind;
  limits: Limits;
  /** Recorded on the events this session causes; the engine's actor when absent. */
  actor?: string;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Output of a tool: a JSON object, as MCP's structuredContent must be. */
export type Structured = Record<string, unknown>;

export interface ToolSpec<I extends z.ZodObject, O extends z.ZodType<Structured>> {
  name: string;
  title: string;
  family: ToolFamily;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Transports that offer the tool; all when absent. */
  transports?: readonly TransportKind[];
  run(ctx: ToolContext, args: z.output<I>): Promise<z.output<O>>;
  /** A short rendering of the result for a model that reads text only. */
  text(result: z.output<O>, args: z.output<I>): string;
}

/** A tool with its types erased, as the table holds it. */
export interface Tool {
  name: string;
  title: string;
  family: ToolFamily;
  description: string;
  input: z.ZodObject;
  output: z.ZodType<Structured>;
  annotations: ToolAnnotations;
  transports?: readonly TransportKind[];
  /** Parses the raw arguments (a ZodError when they do not fit), runs, renders. */
  call(ctx: ToolContext, args: unknown): Promise<{ structured: Structured; text: string }>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodType<Structured>>(spec: ToolSpec<I, O>): Tool {
  const { run, text, ...meta } = spec;
  return {
    ...meta,
    async call(ctx, raw) {
      const args = spec.input.parse(raw ?? {});
      const result = await run(ctx, args);
      return { structured: result, text: text(result, args) };
    },
  };
}

/**
 * One call of a tool as every face makes it (MCP over stdio and HTTP, the console): the profile
 * allows it, the write stays under the size limits, then it runs. Throws what the tool throws.
 */
export function invokeTool(
  ctx: ToolContext,
  tool: Tool,
  args: unknown,
): Promise<{ structured: Structured; text: string }> {
  checkAllowed(ctx.profile, tool);
  checkWriteArgs(ctx.limits, args, "file_write, then file_insert with line -1");
  return tool.call(ctx, args);
}

// Annotation presets: most tools fall in one of these.
export const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
export const ADDITIVE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
export const OVERWRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
};
export const EDIT: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};

export const workspaceArg = z
  .string()
  .optional()
  .describe("Workspace to act on. Omit it to use the session's workspace.");

/** An operation's own argument schema plus the optional workspace every file tool takes. */
export const onWorkspace = <Shape extends z.ZodRawShape>(schema: z.ZodObject<Shape, z.core.$strict>) =>
  schema.extend({ workspace: workspaceArg });

/** The workspace a call acts on (see access/binding.ts), pointing MCP callers at workspace_list. */
export const workspaceFor = (ctx: ToolContext, requested: string | undefined): Promise<string> =>
  workspaceForCall(ctx.afs, ctx, requested, "see workspace_list");
