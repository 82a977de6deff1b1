// Starts the built `afs serve` on a free port for a test and talks to it: SDK sessions over
// Streamable HTTP with a bearer token, raw POSTs for status codes, and the CLI for tokens.
import { type ChildProcess, spawn } from "node:child_process";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MAIN } from "../cli/run.js";
import { type Home, open, type Session } from "./session.js";

export interface Served {
  url: string;
  stderr(): string;
  stop(): Promise<number | null>;
}

export async function serve(h: Home, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, "serve", "--port", "0", ...args], {
    env: { ...h.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const found = /listening on (\S+\/mcp)\b/.exec(stderr);
      if (found?.[1]) resolve(found[1]);
    });
    void exited.then((code) => reject(new Error(`afs serve exited ${code}: ${stderr}`)));
  });
  return {
    url,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** An SDK client session on /mcp, with a bearer token unless null. */
export function connectHttp(url: string, token: string | null, version?: string): Promise<Session> {
  const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
  return open(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }), version);
}

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** One raw JSON-RPC POST, as a client without the SDK would send it. */
export async function post(url: string, message: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
      ...headers,
    },
    body: typeof message === "string" ? message : JSON.stringify(message),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

export const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name, arguments: args },
});

/** Issues a token with the CLI and returns its id and secret. */
export function issue(h: Home, args: readonly string[]): { id: string; secret: string } {
  const r = h.run(["token", "issue", ...args, "--json"]);
  if (r.status !== 0) throw new Error(`afs token issue failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { token_id: string; token: string };
  return { id: out.token_id, secret: out.token };
}
