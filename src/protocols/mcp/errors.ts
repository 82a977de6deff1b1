// The MCP error edge: anything a tool call throws becomes one isError result with a one-line text
// for the model and structuredContent {error: {code, message, details?}}, whatever the transport.
// Where the error points next, it names an MCP tool the session has, never a CLI command.
import { ZodError } from "zod";
import { AfsError, type NextStep, toAfsError, withNextStep } from "../../core/errors.js";
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
  // No MCP tool lists tokens; the message alone says what was wrong.
  "list-tokens": null,
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
