// HTTP replies the server writes itself (everything but MCP responses): JSON bodies, and JSON-RPC
// errors with an HTTP status, shaped like the SDK's own so clients read them the same way.
import type { ServerResponse } from "node:http";

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(text);
}

/** A JSON-RPC error answered with an HTTP status (the request id is unknown at this point). */
export function rpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
): void {
  json(res, status, { jsonrpc: "2.0", error: { code, message }, id: null }, headers);
}
