// Drives the built `afs mcp` through the official SDK client over stdio, in a temporary AFS_HOME
// on SQLite or Redis. Sessions list tools on connect, so the client validates every structuredContent.
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage, MessageExtraInfo, Tool } from "@modelcontextprotocol/sdk/types.js";
import { Afs } from "../../src/workspace/afs.js";
import { ensureBuilt, MAIN } from "../cli/run.js";
import { redisFactory, type StoreName } from "../contract/stores.js";

export { ensureBuilt };

export interface Session {
  client: Client;
  tools: Tool[];
  /** The protocol version the server agreed to. */
  protocolVersion: string;
  /** Calls a tool; the SDK client has already checked the result against the tool's output schema. */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed and returns its structuredContent. */
  ok<T = Record<string, unknown>>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Calls a tool that must fail and returns its error code and message. */
  fail(name: string, args?: Record<string, unknown>): Promise<{ code: string; message: string; text: string }>;
  stderr(): string;
  close(): Promise<void>;
}

export interface Home {
  home: string;
  /** The store URL given to the engine and the children (AFS_STORE), or undefined for the home's SQLite file. */
  store: string | undefined;
  env: Record<string, string>;
  /** The engine on the same AFS_HOME, for seeding and checking from the test process. */
  afs: Afs;
  connect(args: readonly string[], options?: ConnectOptions): Promise<Session>;
  /** Runs `afs …` to completion with stdin closed (startup failures). */
  run(args: readonly string[], env?: Record<string, string>): { status: number | null; stdout: string; stderr: string };
  cleanup(): Promise<void>;
}

export interface ConnectOptions {
  env?: Record<string, string>;
  /** Ask for this protocol version in initialize instead of the SDK's latest. */
  protocolVersion?: string;
}

/** A temporary AFS_HOME; on `store` (a URL, also set as AFS_STORE for the children) if given. */
export async function home(store?: string): Promise<Home> {
  const base = await mkdtemp(join(tmpdir(), "afs-mcp-"));
  const dir = join(base, "home");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AFS_")) env[k] = v;
  Object.assign(env, { AFS_HOME: dir, AFS_ACTOR: "tester" }, store === undefined ? {} : { AFS_STORE: store });
  const afs = await Afs.open({ home: dir, actor: "seed", store });
  const sessions: Session[] = [];
  return {
    home: dir,
    store,
    env,
    afs,
    async connect(args, options = {}) {
      const session = await connect({ ...env, ...options.env }, base, args, options.protocolVersion);
      sessions.push(session);
      return session;
    },
    run(args, extra = {}) {
      // Bounded: spawnSync blocks the test's process, so vitest's timeout could not end a hang.
      const r = spawnSync(process.execPath, [MAIN, ...args], {
        env: { ...env, ...extra },
        cwd: base,
        input: "",
        timeout: 240_000,
        killSignal: "SIGKILL",
      });
      if (r.error) throw new Error(`afs ${args.join(" ")}: ${r.error.message}; stderr: ${r.stderr?.toString()}`);
      return { status: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    },
    async cleanup() {
      await Promise.allSettled(sessions.map((s) => s.close()));
      await afs.close();
      await rm(base, { recursive: true, force: true });
    },
  };
}

let keyspace = 0;

/**
 * Homes on one of the tested stores, for a describe block: SQLite gives each home its own file;
 * Redis starts one redis-server for the block (beforeAll/afterAll) and gives each home its own
 * key prefix, so homes never see each other's workspaces.
 */
export function storeHomes(name: StoreName): () => Promise<Home> {
  if (name === "sqlite") return () => home();
  const { server } = redisFactory();
  return () => home(`${server().url}?prefix=mcp${process.pid}x${++keyspace}`);
}

async function connect(
  env: Record<string, string>,
  cwd: string,
  args: readonly string[],
  version: string | undefined,
): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, ...args],
    env,
    cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return open(transport, version, () => stderr);
}

/** An SDK client session over any client transport (stdio here, Streamable HTTP in the HTTP tests). */
export async function open(inner: Transport, version?: string, stderr: () => string = () => ""): Promise<Session> {
  const pinned = new VersionedTransport(inner, version);
  const client = new Client({ name: "afs-test", version: "1.0.0" });
  await client.connect(pinned);
  const { tools } = await client.listTools();
  const call = (name: string, a: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: a }) as Promise<CallToolResult>;
  return {
    client,
    tools,
    protocolVersion: pinned.negotiated,
    call,
    async ok<T>(name: string, a: Record<string, unknown> = {}) {
      const r = await call(name, a);
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structuredContent ?? r.content)}`);
      return r.structuredContent as T;
    },
    async fail(name, a = {}) {
      const r = await call(name, a);
      if (!r.isError) throw new Error(`${name} succeeded, expected an error: ${JSON.stringify(r.structuredContent)}`);
      const { error } = r.structuredContent as { error: { code: string; message: string } };
      const first = r.content[0];
      return { code: error.code, message: error.message, text: first?.type === "text" ? first.text : "" };
    },
    stderr,
    close: () => client.close(),
  };
}

/**
 * A client transport, plus what the SDK client cannot do alone: ask for an older protocol version
 * in initialize, and remember the version the server answered (the client reports it here).
 */
class VersionedTransport implements Transport {
  negotiated = "";
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: Transport,
    private readonly version: string | undefined,
  ) {}

  start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onmessage = (m) => this.onmessage?.(m);
    return this.inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.version !== undefined && "method" in message && message.method === "initialize") {
      return this.inner.send({ ...message, params: { ...message.params, protocolVersion: this.version } });
    }
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.negotiated = version;
    // The HTTP transport sends it as MCP-Protocol-Version on every later request.
    this.inner.setProtocolVersion?.(version);
  }
}
