// HTTP throughput of `afs serve` (bearer token) by protocol revision: calls per second with 1, 8
// and 32 concurrent clients, each calling file_read on a 2 KiB file back to back, for a stateless
// 2026-07-28 client (SDK v2, pinned: every request carries its `_meta` envelope, no initialize)
// against a 2025-11-25 one (SDK v1: initialize once, then one POST per call). Each server
// request builds a fresh MCP server either way; the revisions take turns per concurrency level so
// drift in machine load touches both alike. The clients share the bench process (and its cores)
// with each other, and the machine with afs serve.
// Run: npm run build && node --import tsx bench/mcp-http-throughput.ts [SECONDS]
import type { ChildProcess } from "node:child_process";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { StreamableHTTPClientTransport as HttpTransportV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { emitJson, isMain, makeTempDir, printTable, REPO_ROOT, removeDir, round, startServe } from "./lib.js";
import { connectModern } from "./mcp-latency.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const WORKSPACE = "bench";
const CONCURRENCY = [1, 8, 32] as const;
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
type Revision = (typeof REVISIONS)[number];
const CONTENT = `${"x".repeat(63)}\n`.repeat(32);

interface Caller {
  callTool(call: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

function afsCli(env: Record<string, string>, args: string[], input = ""): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, input });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout.toString();
}

/**
 * fetch without the transport's long-lived AbortSignal (see mcp-latency.ts), retried once when the
 * pooled socket turns out closed: an SDK v2 client's first call compiles every tool's output
 * schema (about a second here), and 32 of them block the event loop past afs serve's 5 s
 * keep-alive, so the pool can hand out a socket the server has already closed.
 */
async function retryingFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: null });
  } catch (e) {
    if ((e as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw e;
    return fetch(url, { ...init, signal: null });
  }
}

async function client(revision: Revision, url: URL, token: string): Promise<Caller> {
  const options = {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: retryingFetch,
  };
  if (revision === "2026-07-28") return connectModern(new HttpTransportV2(url, options));
  const c = new Client({ name: "afs-bench", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(url, options));
  await c.listTools();
  return c;
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux; null elsewhere): what
 * afs serve spends per call, apart from the clients that share the machine with it.
 */
function cpuMs(pid: number | undefined): number | null {
  const stat = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(stat)) return null;
  const fields = (readFileSync(stat, "utf8").split(") ")[1] ?? "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

/** Every client calls back to back until `ms` have passed; calls per second and the calls made. */
async function drive(callers: Caller[], ms: number): Promise<{ rate: number; calls: number }> {
  const call = { name: "file_read", arguments: { path: "/read.txt" } };
  const end = performance.now() + ms;
  let calls = 0;
  const start = performance.now();
  await Promise.all(
    callers.map(async (c) => {
      while (performance.now() < end) {
        const r = (await c.callTool(call)) as { isError?: boolean };
        if (r.isError) throw new Error(`file_read failed: ${JSON.stringify(r)}`);
        calls++;
      }
    }),
  );
  return { rate: calls / ((performance.now() - start) / 1000), calls };
}

export async function main(seconds = 5): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const work = await makeTempDir("afs-bench-mcp-http-");
  let serve: ChildProcess | null = null;
  const results: Record<number, Partial<Record<Revision, number>>> = {};
  const serverCpu: Record<number, Partial<Record<Revision, number | null>>> = {};
  try {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AFS_")) env[k] = v;
    Object.assign(env, { AFS_HOME: join(work, "home"), AFS_ACTOR: "bench" });
    afsCli(env, ["ws", "create", WORKSPACE]);
    const { token } = JSON.parse(
      afsCli(env, ["token", "issue", "--workspace", WORKSPACE, "--profile", "workspace-rw", "--json"]),
    ) as { token: string };
    const served = await startServe(CLI, env);
    serve = served.child;
    const url = new URL(served.url);
    const seed = await client("2025-11-25", url, token);
    await seed.callTool({ name: "file_write", arguments: { path: "/read.txt", content: CONTENT } });
    await seed.close();

    for (const n of CONCURRENCY) {
      results[n] = {};
      serverCpu[n] = {};
      for (const revision of REVISIONS) {
        const callers: Caller[] = [];
        for (let i = 0; i < n; i++) callers.push(await client(revision, url, token));
        try {
          await drive(callers, 1000); // warm-up
          const before = cpuMs(serve.pid);
          const { rate, calls } = await drive(callers, seconds * 1000);
          const after = cpuMs(serve.pid);
          (results[n] as Record<Revision, number>)[revision] = rate;
          (serverCpu[n] as Record<Revision, number | null>)[revision] =
            before === null || after === null ? null : (after - before) / calls;
        } finally {
          await Promise.allSettled(callers.map((c) => c.close()));
        }
      }
    }
  } finally {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((done) => serve?.once("exit", done));
      serve.kill("SIGTERM");
      await exited;
    }
    await removeDir(work);
  }

  const rows = CONCURRENCY.map((n) => {
    const old = results[n]?.["2025-11-25"] ?? Number.NaN;
    const cur = results[n]?.["2026-07-28"] ?? Number.NaN;
    const cpu = (r: Revision) => serverCpu[n]?.[r];
    const fmt = (v: number | null | undefined) => (v === null || v === undefined ? "-" : v.toFixed(2));
    return [
      n,
      Math.round(old),
      Math.round(cur),
      `${(cur / old).toFixed(2)}x`,
      fmt(cpu("2025-11-25")),
      fmt(cpu("2026-07-28")),
    ];
  });
  printTable(
    `afs serve HTTP throughput, file_read of 2 KiB, ${seconds} s per cell after 1 s warm-up (calls/s; ratio = 2026-07-28 / 2025-11-25)`,
    ["clients", "2025-11-25 (SDK v1)", "2026-07-28 (SDK v2, stateless)", "ratio", "serve CPU ms/call 2025", "2026"],
    rows,
  );
  emitJson("mcp-http-throughput", {
    seconds,
    rows: CONCURRENCY.map((n) => ({
      clients: n,
      calls_per_s_2025_11_25: round(results[n]?.["2025-11-25"] ?? Number.NaN),
      calls_per_s_2026_07_28: round(results[n]?.["2026-07-28"] ?? Number.NaN),
      serve_cpu_ms_per_call_2025_11_25: round(serverCpu[n]?.["2025-11-25"] ?? Number.NaN),
      serve_cpu_ms_per_call_2026_07_28: round(serverCpu[n]?.["2026-07-28"] ?? Number.NaN),
    })),
  });
}

if (isMain(import.meta.url)) {
  const seconds = Number(process.argv[2] ?? 5);
  await main(Number.isFinite(seconds) && seconds > 0 ? seconds : 5);
}
