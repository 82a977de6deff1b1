// The MCP error edge: anything a tool call throws becomes one isError result with a one-line text
// for the model and structuredContent {error: {code, message, details?}}, whatever the transport;
// anything a resource request throws becomes one JSON-RPC error from RPC_CODES.
// Where the error points next, it names an MCP tool the session has, never a CLI command.
import { ZodError } from "zod";
import { AfsError, type ErrorCode, type NextStep, toAfsError, withNextStep } from "../../core/errors.js";
import { issuesText } from "../../core/schema-issues.js";
import type { ToolError } from "./schemas.js";

/** A tools/call result as afs builds it, the same on every protocol revision. */
export type ToolResult = {
  isError?: true;
  content: { type: "text"; text: string }[];
  structuredContent: Record<string, unknown>;
};

/** Each next step as the tool that takes it; a step whose tool the session lacks is left out. */
export const MCP_NEXT_STEPS: Readonly<Record<NextStep, { tool: string; text: string } | null>> = {
  "list-workspaces": { tool: "workspace_list", text: "call workspace_list to see the workspaces" },
  "list-checkpoints": { tool: "checkpoint_list", text: "call checkpoint_list to see the checkpoints" },
  "list-templates": { tool: "workspace_list", text: "call workspace_list to see the templates and their slugs" },
  "list-tokens": { tool: "mcp_token_list", text: "call mcp_token_list to see the tokens" },
};

/** The next steps a session can take, in its tools' words. */
export function nextStepsFor(tools: ReadonlySet<string>): Partial<Record<NextStep, string>> {
  const steps: Partial<Record<NextStep, string>> = {};
  for (const [step, entry] of Object.entries(MCP_NEXT_STEPS) as [NextStep, { tool: string; text: string } | null][]) {
    if (entry && tools.has(entry.tool)) steps[step] = entry.text;
  }
  return steps;
}

/** Argument errors name the argument, so the model can fix exactly that. */
function fromZod(e: ZodError): AfsError {
  return new AfsError("INVALID_ARGUMENT", `invalid arguments: ${issuesText(e.issues)}; fix them and call again`);
}

export const asAfsError = (e: unknown): AfsError => (e instanceof ZodError ? fromZod(e) : toAfsError(e));

/**
 * `steps`: the session's next steps (nextStepsFor its listed tools); none when absent. `debug`
 * (the engine's AFS_DEBUG setting): an unexpected error's stack also goes to stderr.
 */
export function errorResult(e: unknown, steps: Partial<Record<NextStep, string>> = {}, debug = false): ToolResult {
  const err = asAfsError(e);
  if (debug && !(e instanceof AfsError || e instanceof ZodError)) {
    process.stderr.write(`afs mcp: ${(e instanceof Error && e.stack) || String(e)}\n`);
  }
  const message = withNextStep(err, steps);
  const error: ToolError["error"] = { code: err.code, message };
  // Details go out as JSON; a round trip drops anything that is not (Buffers, functions, cycles).
  if (Object.keys(err.details).length > 0) error.details = jsonSafe(err.details);
  return {
    isError: true,
    content: [{ type: "text", text: `${err.code}: ${message.replace(/\s*\n\s*/g, " ")}` }],
    structuredContent: { error },
  };
}

function jsonSafe(details: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(details)) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/**
 * JSON-RPC error codes for the requests that answer with a protocol error rather than an isError
 * result (resources/*). Everything the caller can fix is -32602, which 2026-07-28 names for a
 * missing resource; server-side failures are -32603. The afs code travels in `data.code`.
 */
export const RPC_CODES: Readonly<Record<ErrorCode, number>> = {
  NOT_FOUND: -32602,
  ALREADY_EXISTS: -32602,
  PERMISSION_DENIED: -32602,
  INVALID_PATH: -32602,
  INVALID_ARGUMENT: -32602,
  QUOTA_EXCEEDED: -32602,
  CONFLICT: -32603,
  TIMEOUT: -32603,
  IO_ERROR: -32603,
  INTERNAL: -32603,
};

/** A JSON-RPC error as an Error: SDK request handlers (v1 and v2) send its code, message and data as they are. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { code: ErrorCode; details?: Record<string, unknown> },
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Anything a resource request throws, as the one JSON-RPC error it is answered with. */
export function rpcError(e: unknown, steps: Partial<Record<NextStep, string>> = {}): RpcError {
  if (e instanceof RpcError) return e;
  const err = asAfsError(e);
  const data: RpcError["data"] = { code: err.code };
  if (Object.keys(err.details).length > 0) data.details = jsonSafe(err.details);
  return new RpcError(RPC_CODES[err.code], `${err.code}: ${withNextStep(err, steps)}`, data);
}
