// The console's error edge: an AfsError becomes an HTTP status and a JSON body {error: {code,
// message, details?}} the page shows as text. One table, as the CLI maps codes to exit statuses.
import type { ServerResponse } from "node:http";
import type { ErrorCode } from "../../core/errors.js";
import { asAfsError } from "../mcp/errors.js";
import { SECURITY_HEADERS } from "./headers.js";

const STATUS: Readonly<Record<ErrorCode, number>> = {
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  INVALID_PATH: 400,
  INVALID_ARGUMENT: 400,
  CONFLICT: 409,
  QUOTA_EXCEEDED: 413,
  TIMEOUT: 503,
  IO_ERROR: 503,
  INTERNAL: 500,
};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(text);
}

/** A refusal the console makes itself (no AfsError behind it). */
export const sendRefusal = (res: ServerResponse, status: number, code: ErrorCode, message: string): void =>
  sendJson(res, status, { error: { code, message } });

export function sendError(res: ServerResponse, e: unknown, debug: boolean): void {
  const err = asAfsError(e);
  if (err.code === "INTERNAL" || (debug && !(e instanceof Error && e.name === "AfsError"))) {
    process.stderr.write(`afs console: ${(e instanceof Error && e.stack) || String(e)}\n`);
  }
  sendJson(res, STATUS[err.code], { error: err.toJSON() });
}
