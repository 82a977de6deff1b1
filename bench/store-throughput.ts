// Throughput and latency of file_write, file_read and checkpoint_create over MCP HTTP with 1, 8 and
// 32 concurrent clients (the official SDK's Streamable HTTP client), one `afs serve` on SQLite vs
// one on Redis, and two `afs serve` processes sharing one Redis (clients split between them), in
// one run. Each client works in its own workspace for checkpoints and shares one for reads/writes.
// Run: npm run build && node --import tsx bench/store-throughput.ts [SECONDS_PER_CELL]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startRedis } from "../test/helpers/redis-server.js";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  percentile,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  startServe,
} from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const CONCURRENCY = [1, 8, 32] as const;
const OPS = ["file_write", "file_read", "checkpoint_create"] as const;
type Op = (typeof OPS)[number];
const SHARED = "shared";
const CONTENT = `${"x".repeat(63)}\n`.repeat(32);

interface Setup {
  label: string;
  store: string;
  /** How many `afs serve` processes share the store; clients are dealt to them in turn. */
  servers: number;
}

interface Cell {
  setup: string;
  op: Op;
  clients: number;
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function afs(env: NodeJS.ProcessEnv, args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, input: "" });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return r.stdout.toString();
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "afs-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { fetch: (u, init) => fetch(u, { ...init, signal: null }) }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
}

/** The i-th call of client c: writes and reads spread over files; a checkpoint follows one write. */
async function once(client: Client, op: Op, c: number, i: number): Promise<number> {
  if (op === "checkpoint_create") {
    // A clean workspace keeps its head, so each checkpoint has one change to fold (not timed).
    await call(client, "file_write", { workspace: `ws-${c}`, path: `/f${i % 50}.txt`, content: `${c}:${i}\n` });
  }
  const start = process.hrtime.bigint();
  if (op === "file_write") {
    await call(client, "file_write", { workspace: SHARED, path: `/c${c}/f${i % 50}.txt`, content: CONTENT });
  } else if (op === "file_read") {
    await call(client, "file_read", { workspace: SHARED, path: `/c${c % 8}/f${i % 50}.txt` });
  } else {
    await call(client, "checkpoint_create", { workspace: `ws-${c}` });
  }
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function cell(setup: Setup, clients: Client[], op: Op, n: number, seconds: number): Promise<Cell> {
  const used = clients.slice(0, n);
  const samples: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    used.map(async (client, c) => {
      for (let i = 0; Date.now() < deadline; i++) samples.push(await once(client, op, c, i));
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  return {
    setup: setup.label,
    op,
    clients: n,
    calls: samples.length,
    perSecond: Math.round(samples.length / elapsed),
    p50: round(percentile(samples, 50)),
    p99: round(percentile(samples, 99)),
  };
}

async function run(setup: Setup, work: string, seconds: number): Promise<Cell[]> {
  const env: NodeJS.ProcessEnv = { ...process.env, AFS_HOME: join(work, setup.label), AFS_STORE: setup.store };
  const max = Math.max(...CONCURRENCY);
  afs(env, ["ws", "create", SHARED]);
  for (let c = 0; c < max; c++) afs(env, ["ws", "create", `ws-${c}`]);
  const servers = await Promise.all(
    Array.from({ length: setup.servers }, () => startServe(CLI, env, ["--auth", "none", "--profile", "admin-rw"])),
  );
  const clients: Client[] = [];
  try {
    for (let c = 0; c < max; c++) clients.push(await connect((servers[c % servers.length] as { url: string }).url));
    // Files for the readers, and a warm-up of every op.
    for (let c = 0; c < 8; c++) {
      for (let i = 0; i < 50; i++) await once(clients[c] as Client, "file_write", c, i);
    }
    for (const op of OPS) await cell(setup, clients, op, 2, 0.5);
    const cells: Cell[] = [];
    for (const op of OPS) for (const n of CONCURRENCY) cells.push(await cell(setup, clients, op, n, seconds));
    return cells;
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.all(
      servers.map(({ child }) => {
        const exited = new Promise((done) => child.once("exit", done));
        child.kill("SIGTERM");
        return exited;
      }),
    );
  }
}

export async function main(seconds = 3): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const work = await makeTempDir("afs-bench-stores-");
  const redis = await startRedis();
  try {
    const setups: Setup[] = [
      { label: "sqlite", store: `sqlite:${join(work, "afs.db")}`, servers: 1 },
      { label: "redis", store: `redis://127.0.0.1:${redis.port}/0`, servers: 1 },
      { label: "redis, 2 serve", store: `redis://127.0.0.1:${redis.port}/1`, servers: 2 },
    ];
    const cells: Cell[] = [];
    for (const setup of setups) cells.push(...(await run(setup, work, seconds)));
    printTable(
      `MCP over HTTP, ${seconds} s per cell (load ${(await import("node:os")).loadavg()[0]?.toFixed(1)})`,
      ["store", "op", "clients", "calls/s", "p50 ms", "p99 ms"],
      cells.map((c) => [c.setup, c.op, c.clients, c.perSecond, fmtMs(c.p50), fmtMs(c.p99)]),
    );
    emitJson("store-throughput", { seconds, cells });
  } finally {
    await redis.stop();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) await main(Number(process.argv[2] ?? 3));
