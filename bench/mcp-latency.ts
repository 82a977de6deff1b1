// Per-call MCP latency through the official SDK clients: afs over stdio (`afs mcp`) and over HTTP
// (`afs serve`, bearer token) on both protocol revisions (2025-11-25 with the SDK v1 client,
// 2026-07-28 with the SDK v2 client pinned to it), against the official filesystem server over
// stdio (an SDK v1 server: 2025-11-25 only), in one run on the same 2 KiB files: read, the first
// 20 lines, whole-file write, one-line replace. Calls are sequential, as an agent issues them; the
// servers take turns in blocks so drift in machine load touches them all alike.
// Run: npm run build && node --import tsx bench/mcp-latency.ts [CALLS]
import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as HttpTransportV2,
  type Transport as TransportV2,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioTransportV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  type Summary,
  startServe,
  summarize,
} from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const OFFICIAL = join(REPO_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const WORKSPACE = "bench";
const WARMUP = 200;
/** Calls each server makes before the next takes its turn. */
const BLOCK = 100;

const OPS = ["read", "lines", "write", "replace"] as const;
type Op = (typeof OPS)[number];

/** The one line file_replace / edit_file flips back and forth. */
const MARKERS = ['const marker = "alpha";', 'const marker = "bravo";'] as const;

/** A 2 KiB text file of 32 lines of 64 bytes; `variant` changes every line but the marker line. */
function text(variant: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 32; i++) {
    const line = i === 16 ? MARKERS[0] : `// ${variant} line ${String(i).padStart(2, "0")} of the bench file`;
    lines.push(line.padEnd(63, "."));
  }
  const content = `${lines.join("\n")}\n`;
  if (Buffer.byteLength(content) !== 2048) throw new Error(`bench file is ${Buffer.byteLength(content)} bytes`);
  return content;
}
const WRITES = [text("first"), text("second")] as const;

type Revision = "2025-11-25" | "2026-07-28";
type ToolCall = { name: string; arguments: Record<string, unknown> };

/** A connected client of either SDK major: calls a tool, closes. */
interface Caller {
  callTool(call: ToolCall): Promise<unknown>;
  close(): Promise<void>;
}

/** A server under test: how to call each op on its i-th call, so writes and replaces alternate. */
interface Subject {
  server: string;
  transport: "stdio" | "http";
  revision: Revision;
  /** The official server is the baseline the afs rows are compared with. */
  baseline: boolean;
  client: Caller;
  call: Record<Op, (i: number) => { name: string; arguments: Record<string, unknown> }>;
  samples: Record<Op, number[]>;
  close(): Promise<void>;
}

const afsCalls: Subject["call"] = {
  read: () => ({ name: "file_read", arguments: { path: "/read.txt" } }),
  lines: () => ({ name: "file_lines", arguments: { path: "/read.txt", start: 1, end: 20 } }),
  write: (i) => ({ name: "file_write", arguments: { path: "/write.txt", content: WRITES[i % 2] } }),
  replace: (i) => ({
    name: "file_replace",
    arguments: { path: "/replace.txt", old: MARKERS[i % 2], new: MARKERS[(i + 1) % 2] },
  }),
};

const officialCalls = (dir: string): Subject["call"] => ({
  read: () => ({ name: "read_text_file", arguments: { path: join(dir, "read.txt") } }),
  lines: () => ({ name: "read_text_file", arguments: { path: join(dir, "read.txt"), head: 20 } }),
  write: (i) => ({ name: "write_file", arguments: { path: join(dir, "write.txt"), content: WRITES[i % 2] } }),
  replace: (i) => ({
    name: "edit_file",
    arguments: { path: join(dir, "replace.txt"), edits: [{ oldText: MARKERS[i % 2], newText: MARKERS[(i + 1) % 2] }] },
  }),
});

async function connect(transport: Transport): Promise<Caller> {
  const client = new Client({ name: "afs-bench", version: "1.0.0" });
  await client.connect(transport);
  // A host lists tools first; the SDK client then validates every structuredContent, as in use.
  await client.listTools();
  return client;
}

/** An SDK v2 client pinned to 2026-07-28 (no fallback: a server without it fails the bench). */
export async function connectModern(transport: TransportV2): Promise<Caller> {
  const client = new ClientV2(
    { name: "afs-bench", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(transport);
  await client.listTools();
  return client;
}

function subject(
  server: string,
  transport: Subject["transport"],
  revision: Revision,
  client: Caller,
  call: Subject["call"],
): Subject {
  return {
    server,
    transport,
    revision,
    baseline: server !== "afs",
    client,
    call,
    samples: { read: [], lines: [], write: [], replace: [] },
    close: () => client.close(),
  };
}

const stdio = (command: string, args: string[], env: Record<string, string>) =>
  new StdioClientTransport({ command, args, env, stderr: "ignore" });

function afsCli(env: Record<string, string>, args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, input: "" });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout.toString();
}

async function callOk(s: Subject, op: Op, i: number): Promise<void> {
  const r = (await s.client.callTool(s.call[op](i))) as Pick<CallToolResult, "isError" | "content">;
  if (r.isError) throw new Error(`${s.server}/${s.transport} ${op} failed: ${JSON.stringify(r.content)}`);
}

async function measure(subjects: Subject[], op: Op, calls: number): Promise<void> {
  // Every server starts from the same file; the warm-up leaves the alternation in phase.
  for (const s of subjects) for (let i = 0; i < WARMUP; i++) await callOk(s, op, i);
  for (let done = 0; done < calls; done += BLOCK) {
    for (const s of subjects) {
      for (let i = done; i < Math.min(done + BLOCK, calls); i++) {
        const start = process.hrtime.bigint();
        await callOk(s, op, i);
        s.samples[op].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
  }
}

export async function main(calls = 2000): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const work = await makeTempDir("afs-bench-mcp-");
  const subjects: Subject[] = [];
  let serve: ChildProcess | null = null;
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AFS_")) env[k] = v;
    Object.assign(env, { AFS_HOME: join(work, "home"), AFS_ACTOR: "bench" });
    afsCli(env, ["ws", "create", WORKSPACE]);
    const { token } = JSON.parse(
      afsCli(env, ["token", "issue", "--workspace", WORKSPACE, "--profile", "workspace-rw", "--json"]),
    ) as { token: string };

    const dir = join(work, "official");
    await mkdir(dir);

    const afsMcp = [CLI, "mcp", "--workspace", WORKSPACE];
    subjects.push(subject("afs", "stdio", "2025-11-25", await connect(stdio(process.execPath, afsMcp, env)), afsCalls));
    subjects.push(
      subject(
        "afs",
        "stdio",
        "2026-07-28",
        await connectModern(new StdioTransportV2({ command: process.execPath, args: afsMcp, env, stderr: "ignore" })),
        afsCalls,
      ),
    );
    const served = await startServe(CLI, env);
    serve = served.child;
    const httpOptions = {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      // The transport hands one long-lived AbortSignal to every fetch and undici leaves a listener
      // on it per request (freed only by GC): thousands of MaxListenersExceededWarning lines on the
      // client's stderr. Calls here are sequential and never aborted, so fetch goes without it.
      fetch: (url: string | URL, init?: RequestInit) => fetch(url, { ...init, signal: null }),
    };
    const url = new URL(served.url);
    subjects.push(
      subject(
        "afs",
        "http",
        "2025-11-25",
        await connect(new StreamableHTTPClientTransport(url, httpOptions)),
        afsCalls,
      ),
    );
    subjects.push(
      subject("afs", "http", "2026-07-28", await connectModern(new HttpTransportV2(url, httpOptions)), afsCalls),
    );
    subjects.push(
      subject(
        "official",
        "stdio",
        "2025-11-25",
        await connect(stdio(process.execPath, [OFFICIAL, dir], env)),
        officialCalls(dir),
      ),
    );

    // The same three files with the same bytes behind every server.
    for (const name of ["read.txt", "write.txt", "replace.txt"]) await writeFile(join(dir, name), WRITES[0]);
    for (const s of subjects.filter((x) => !x.baseline)) {
      for (const path of ["/read.txt", "/write.txt", "/replace.txt"]) {
        await s.client.callTool({ name: "file_write", arguments: { path, content: WRITES[0] } });
      }
    }

    for (const op of OPS) await measure(subjects, op, calls);
  } finally {
    await Promise.allSettled(subjects.map((s) => s.close()));
    if (serve && serve.exitCode === null) {
      const exited = new Promise((done) => serve?.once("exit", done));
      serve.kill("SIGTERM");
      await exited;
    }
    await removeDir(work);
  }

  report(subjects, calls);
}

const TOOL_NAMES: Record<string, Record<Op, string>> = {
  afs: { read: "file_read", lines: "file_lines", write: "file_write", replace: "file_replace" },
  official: { read: "read_text_file", lines: "read_text_file head", write: "write_file", replace: "edit_file" },
};

function report(subjects: Subject[], calls: number): void {
  const baseline = subjects.find((s) => s.baseline);
  const rows: Array<Array<string | number>> = [];
  const json: Array<Record<string, unknown>> = [];
  for (const op of OPS) {
    const base = baseline ? summarize(baseline.samples[op]) : null;
    for (const s of subjects) {
      const sum: Summary = summarize(s.samples[op]);
      // Only same-transport rows compare: the official server has no HTTP transport.
      const compared = !s.baseline && s.transport === baseline?.transport && base !== null;
      const ratio = (x: number, y: number | undefined) => (compared && y ? x / y : null);
      const p50Ratio = ratio(sum.p50, base?.p50);
      const p95Ratio = ratio(sum.p95, base?.p95);
      rows.push([
        op,
        s.server,
        s.transport,
        s.revision,
        TOOL_NAMES[s.server]?.[op] ?? "",
        fmtMs(sum.p50),
        fmtMs(sum.p95),
        p50Ratio === null ? "-" : `${p50Ratio.toFixed(2)}x`,
        p95Ratio === null ? "-" : `${p95Ratio.toFixed(2)}x`,
      ]);
      json.push({
        op,
        server: s.server,
        transport: s.transport,
        revision: s.revision,
        p50_ms: round(sum.p50),
        p95_ms: round(sum.p95),
        max_ms: round(sum.max),
        ...(p50Ratio === null ? {} : { p50_ratio: round(p50Ratio), p95_ratio: round(p95Ratio ?? Number.NaN) }),
      });
    }
  }
  printTable(
    `per-call latency, ${calls} sequential calls per row after ${WARMUP} warm-up calls, 2 KiB files (ms; ratio = afs / official over stdio, goal <= 1.00x)`,
    ["op", "server", "transport", "revision", "tool", "p50", "p95", "p50 ratio", "p95 ratio"],
    rows,
  );
  console.log(
    "afs over HTTP uses a workspace-rw bearer token; the official server speaks stdio and 2025-11-25 only, so HTTP rows have no baseline and both afs revisions compare with its 2025-11-25 row.",
  );
  emitJson("mcp-latency", { calls, warmup: WARMUP, file_bytes: 2048, http_auth: "token workspace-rw", rows: json });
}

if (isMain(import.meta.url)) {
  const calls = Number(process.argv[2] ?? 2000);
  await main(Number.isInteger(calls) && calls > 0 ? calls : 2000);
}
