// The MCP error edge: anything a tool call throws becomes one isError result with a one-line text
// for the model and structuredContent {error: {code, message, details?}}, whatever the transport.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ZodError } from "zod";
import { AfsError, toAfsError } from "../../core/errors.js";
import type { ToolError } from "./schemas.js";

/** Argument errors name the argument, so the model can fix exactly that. */
function fromZod(e: ZodError): AfsError {
  const parts = e.issues.map((issue) => {
    const at = issue.path.map(String).join(".");
    return at ? `${at}: ${issue.message}` : issue.message;
  });
  return new AfsError("INVALID_ARGUMENT", `invalid arguments: ${parts.join("; ")}; fix them and call again`);
}

export const asAfsError = (e: unknown): AfsError => (e instanceof ZodError ? fromZod(e) : toAfsError(e));

export function errorResult(e: unknown): CallToolResult {
  const err = asAfsError(e);
  if (process.env.AFS_DEBUG === "1" && !(e instanceof AfsError || e instanceof ZodError)) {
    process.stderr.write(`afs mcp: ${(e instanceof Error && e.stack) || String(e)}\n`);
  }
  const error: ToolError["error"] = { code: err.code, message: err.message };
  // Details go out as JSON; a round trip drops anything that is not (Buffers, functions, cycles).
  if (Object.keys(err.details).length > 0) error.details = jsonSafe(err.details);
  return {
    isError: true,
    content: [{ type: "text", text: `${err.code}: ${err.message.replace(/\s*\n\s*/g, " ")}` }],
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
