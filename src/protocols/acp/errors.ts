// The ACP error edge: every AfsError becomes a JSON-RPC error through one table, with the afs code
// (and the path, when there is one) in `data`. Messages say what was wrong; never any file content.
import { RequestError } from "@agentclientprotocol/sdk";
import { ZodError } from "zod";
import { AfsError, type ErrorCode, toAfsError } from "../../core/errors.js";
import { issuesText } from "../../core/schema-issues.js";

/** JSON-RPC codes: -32602 invalid params, -32002 resource not found, -32603 internal error. */
export const ACP_ERROR_CODES: Readonly<Record<ErrorCode, number>> = {
  NOT_FOUND: -32002,
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

function fromZod(e: ZodError): AfsError {
  return new AfsError("INVALID_ARGUMENT", `invalid params: ${issuesText(e.issues)}`);
}

export function toRequestError(e: unknown): RequestError {
  if (e instanceof RequestError) return e;
  const err = e instanceof ZodError ? fromZod(e) : toAfsError(e);
  const data: Record<string, unknown> = { code: err.code };
  for (const key of ["path", "size", "limit", "sessionId"]) {
    if (err.details[key] !== undefined) data[key] = err.details[key];
  }
  return new RequestError(ACP_ERROR_CODES[err.code], err.message, data);
}

/** Runs a handler, turning anything it throws into the JSON-RPC error the table names. */
export async function answer<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw toRequestError(e);
  }
}
