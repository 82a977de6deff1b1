// Per-call latency of the ACP client filesystem methods (fs/read_text_file, fs/write_text_file) as
// afs serves them, against a minimal client on the same SDK answering from plain node:fs/promises
// (readFile/writeFile, no confinement). This process is the AGENT: it spawns two client children
// (bench/acp-client-child.ts afs|plain DIR) over their real stdin/stdout pipes, answers their
// initialize and session/new, then issues sequential requests, the two clients taking turns in
// blocks so drift in machine load touches both alike. Each client has its own directory holding
// the same bytes: a few hundred 2 KiB text files and a copy of a real large text file.
// Run: node --import tsx bench/acp-latency.ts [CALLS]
import { type ChildProcess, spawn } from "node:child_process";
import { copyFile, mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import {
  emitJson,
  fmtBytes,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  summarize,
} from "./lib.js";

const CHILD = join(REPO_ROOT, "bench/acp-client-child.ts");
/** AFS_BENCH_CPU_PROF=DIR: each client child writes V8 CPU profiles to DIR/afs, DIR/plain (node --cpu-prof) as it exits. */
const CPU_PROF = process.env.AFS_BENCH_CPU_PROF;
/** AFS_BENCH_ROWS=text: only the rows whose name contains it (e.g. "write"), for profiling one op. */
const ONLY_ROWS = process.env.AFS_BENCH_ROWS;
const WARMUP = 200;
/** Calls each client makes before the other takes its turn. */
const BLOCK = 100;
/** Distinct 2 KiB files per directory; reads and writes cycle through them. */
const FILES = 300;
/** A real text file nobody here wrote (~1.8 MiB, under afs's 8 MiB text cap). */
const LARGE_SOURCE = process.env.AFS_BENCH_LARGE ?? join(REPO_ROOT, "node_modules/typescript/lib/lib.dom.d.ts");
const LARGE = "large.d.ts";
/** Every read of the large file reads and decodes ~2 MiB (20-60 ms a call): 500 timed calls after
 * 50 warm-up keep the run under three minutes and are plenty for a p95. */
const LARGE_CALLS = 500;
const LARGE_WARMUP = 50;

const SIDES = ["afs", "plain"] as const;
type Side = (typeof SIDES)[number];

/** A 2 KiB text file of 32 lines of 64 bytes, different for every (file, variant). */
function smallText(file: number, variant: number): string {
  const lines: string[] = [];
  for (let i = 0; i < 32; i++) {
    lines.push(
      `// file ${String(file).padStart(3, "0")} variant ${variant} line ${String(i).padStart(2, "0")} `.padEnd(63, "."),
    );
  }
  const content = `${lines.join("\n")}\n`;
  if (Buffer.byteLength(content) !== 2048) throw new Error(`bench file is ${Buffer.byteLength(content)} bytes`);
  return content;
}
const smallName = (file: number): string => `f${String(file).padStart(3, "0")}.txt`;

/** Lines [line, line + limit) 1-based, endings kept: the answer every client must give. */
function windowOf(text: string, line: number, limit: number): string {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return lines.slice(line - 1, line - 1 + limit).join("");
}

interface Client {
  side: Side;
  dir: string;
  sessionId: string;
  child: ChildProcess;
  connection: acp.AgentConnection;
  stderr: () => string;
}

/** One benchmark row: the request for call i, and what its answer must be. */
interface Row {
  name: string;
  method: string;
  calls: number;
  warmup: number;
  call: (c: Client, i: number) => Promise<void>;
  samples: Record<Side, number[]>;
}

/** Spawns a client child and waits for its session/new (it sends initialize first). */
async function startClient(side: Side, dir: string): Promise<Client> {
  // One directory per side: tsx's loader thread writes a profile of its own next to the main thread's.
  const prof = CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", join(CPU_PROF, side)] : [];
  const child = spawn(process.execPath, [...prof, "--import", "tsx", CHILD, side, dir], {
    cwd: REPO_ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  let ready: () => void = () => {};
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
    if (/^ready$/m.test(stderr)) ready();
  });
  const sessionId = `bench-${side}`;
  let opened: (cwd: string) => void = () => {};
  const session = new Promise<string>((resolve) => {
    opened = resolve;
  });
  const connection = acp
    .agent({ name: "afs-bench-agent" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: 1,
      agentCapabilities: {},
      agentInfo: { name: "afs-bench-agent", version: "1.0.0" },
    }))
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      opened(params.cwd);
      return { sessionId };
    })
    .connect(
      acp.ndJsonStream(
        Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
      ),
    );
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`${side} client exited (${code}) before session/new: ${stderr}`))),
  );
  const cwd = await Promise.race([session, exited]);
  if (cwd !== dir) throw new Error(`${side} client opened a session on ${cwd}, not ${dir}`);
  // session/new is answered before the client registers the session; it says when it has.
  await Promise.race([isReady, exited]);
  const client: Client = { side, dir, sessionId, child, connection, stderr: () => stderr.replace(/^ready\n/m, "") };
  await readExpect(client, join(dir, smallName(0)), smallText(0, 0));
  return client;
}

/** Closes the connection (the child's stdin ends and it exits by itself); SIGTERM, then SIGKILL, if it lingers. */
async function stopClient(c: Client): Promise<void> {
  const gone = () => c.child.exitCode !== null || c.child.signalCode !== null;
  if (gone()) return;
  const exited = new Promise<void>((done) => c.child.once("exit", () => done()));
  c.connection.close();
  c.child.stdin?.end();
  const term = setTimeout(() => c.child.kill("SIGTERM"), 2000);
  const kill = setTimeout(() => c.child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(term);
  clearTimeout(kill);
}

async function readExpect(c: Client, path: string, expected: string, line?: number, limit?: number): Promise<void> {
  const r = await c.connection.client.request(acp.methods.client.fs.readTextFile, {
    sessionId: c.sessionId,
    path,
    ...(line === undefined ? {} : { line }),
    ...(limit === undefined ? {} : { limit }),
  });
  // Whole text up to 64 KiB; beyond, length and both ends (comparing 2 MiB would weigh on the timing).
  const same =
    expected.length <= 65536
      ? r.content === expected
      : r.content.length === expected.length && r.content[0] === expected[0] && r.content.at(-1) === expected.at(-1);
  if (!same) {
    throw new Error(
      `${c.side} read of ${path} (line ${line}, limit ${limit}) returned ${r.content.length} chars, expected ${expected.length}`,
    );
  }
}

async function writeOk(c: Client, path: string, content: string): Promise<void> {
  await c.connection.client.request(acp.methods.client.fs.writeTextFile, { sessionId: c.sessionId, path, content });
}

async function measure(clients: Client[], row: Row): Promise<void> {
  for (const c of clients) for (let i = 0; i < row.warmup; i++) await row.call(c, i);
  for (let done = 0; done < row.calls; done += BLOCK) {
    for (const c of clients) {
      for (let i = done; i < Math.min(done + BLOCK, row.calls); i++) {
        const start = process.hrtime.bigint();
        await row.call(c, row.warmup + i);
        row.samples[c.side].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    }
  }
}

export async function main(calls = 2000): Promise<void> {
  const work = await makeTempDir("afs-bench-acp-");
  const clients: Client[] = [];
  const load0 = loadavg();
  const large = await readFile(LARGE_SOURCE, "utf8");
  const largeBytes = (await stat(LARGE_SOURCE)).size;
  const largeLines = large.match(/[^\n]*\n|[^\n]+$/g)?.length ?? 0;
  const largeLine = Math.floor(largeLines / 2);
  let rows: Row[] = [];
  try {
    for (const side of SIDES) {
      const dir = join(work, side);
      await mkdir(dir);
      for (let f = 0; f < FILES; f++) await writeFile(join(dir, smallName(f)), smallText(f, 0));
      await copyFile(LARGE_SOURCE, join(dir, LARGE));
    }
    // Started one after the other so neither pays the other's start-up.
    for (const side of SIDES) clients.push(await startClient(side, join(work, side)));

    // What each file holds now, per side (writes change it); both sides see the same sequence.
    const version: Record<Side, number[]> = { afs: Array(FILES).fill(0), plain: Array(FILES).fill(0) };
    const file = (i: number) => i % FILES;
    const small = (c: Client, i: number) => join(c.dir, smallName(file(i)));
    const samples = (): Record<Side, number[]> => ({ afs: [], plain: [] });
    rows = [
      {
        name: "read 2 KiB",
        method: "fs/read_text_file",
        calls,
        warmup: WARMUP,
        call: (c, i) => readExpect(c, small(c, i), smallText(file(i), version[c.side][file(i)] as number)),
        samples: samples(),
      },
      {
        name: "read 2 KiB, line 10 limit 20",
        method: "fs/read_text_file",
        calls,
        warmup: WARMUP,
        call: (c, i) =>
          readExpect(c, small(c, i), windowOf(smallText(file(i), version[c.side][file(i)] as number), 10, 20), 10, 20),
        samples: samples(),
      },
      {
        name: "write 2 KiB",
        method: "fs/write_text_file",
        calls,
        warmup: WARMUP,
        // Every write changes the file: the next variant of its content.
        call: (c, i) => {
          const f = file(i);
          const next = (version[c.side][f] as number) + 1;
          version[c.side][f] = next;
          return writeOk(c, small(c, i), smallText(f, next));
        },
        samples: samples(),
      },
      {
        name: `read ${fmtBytes(largeBytes)} real file, whole`,
        method: "fs/read_text_file",
        calls: Math.min(calls, LARGE_CALLS),
        warmup: LARGE_WARMUP,
        call: (c) => readExpect(c, join(c.dir, LARGE), large),
        samples: samples(),
      },
      {
        name: `read ${fmtBytes(largeBytes)} real file, line ${largeLine} limit 50`,
        method: "fs/read_text_file",
        calls: Math.min(calls, LARGE_CALLS),
        warmup: LARGE_WARMUP,
        call: (c) => readExpect(c, join(c.dir, LARGE), windowOf(large, largeLine, 50), largeLine, 50),
        samples: samples(),
      },
    ];
    if (ONLY_ROWS) rows = rows.filter((r) => r.name.includes(ONLY_ROWS));
    for (const row of rows) await measure(clients, row);

    // The writes really landed, on both sides.
    for (const c of clients) {
      for (let f = 0; f < FILES; f++) {
        const onDisk = await readFile(join(c.dir, smallName(f)), "utf8");
        if (onDisk !== smallText(f, version[c.side][f] as number))
          throw new Error(`${c.side}: ${smallName(f)} is not what was last written`);
      }
    }
  } catch (e) {
    for (const c of clients) if (c.stderr()) console.error(`--- ${c.side} client stderr:\n${c.stderr()}`);
    throw e;
  } finally {
    await Promise.allSettled(clients.map(stopClient));
    await removeDir(work);
  }
  report(rows, load0, largeBytes);
}

function report(rows: Row[], load0: number[], largeBytes: number): void {
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(
    `environment: node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "?"}), load average ${fmtLoad(load0)} at start, ${fmtLoad(loadavg())} at end`,
  );
  const table: Array<Array<string | number>> = [];
  const json: Array<Record<string, unknown>> = [];
  for (const row of rows) {
    const a = summarize(row.samples.afs);
    const p = summarize(row.samples.plain);
    table.push([
      row.name,
      row.method,
      row.calls,
      fmtMs(a.p50),
      fmtMs(a.p95),
      fmtMs(p.p50),
      fmtMs(p.p95),
      `${(a.p50 / p.p50).toFixed(2)}x`,
      `${(a.p95 / p.p95).toFixed(2)}x`,
    ]);
    json.push({
      row: row.name,
      method: row.method,
      calls: row.calls,
      afs_p50_ms: round(a.p50),
      afs_p95_ms: round(a.p95),
      plain_p50_ms: round(p.p50),
      plain_p95_ms: round(p.p95),
      p50_ratio: round(a.p50 / p.p50),
      p95_ratio: round(a.p95 / p.p95),
    });
  }
  printTable(
    `ACP client fs latency, sequential calls over stdio pipes, agent in this process (ms; ratio = afs / plain node:fs)`,
    ["row", "method", "calls", "afs p50", "afs p95", "plain p50", "plain p95", "p50 ratio", "p95 ratio"],
    table,
  );
  // The same as a markdown table, for an issue note.
  console.log("\n| row | afs p50 / p95 (ms) | plain p50 / p95 (ms) | ratio p50 | ratio p95 |\n|---|---|---|---|---|");
  for (const r of table) console.log(`| ${r[0]} | ${r[3]} / ${r[4]} | ${r[5]} / ${r[6]} | ${r[7]} | ${r[8]} |`);
  console.log(
    `\n${WARMUP} warm-up calls per client per row (${LARGE_WARMUP} warm-up and at most ${LARGE_CALLS} timed for the large file), then timed calls in blocks of ${BLOCK} alternating afs and plain; ${FILES} distinct 2 KiB files per client.`,
  );
  emitJson("acp-latency", {
    warmup: WARMUP,
    block: BLOCK,
    files: FILES,
    file_bytes: 2048,
    large_bytes: largeBytes,
    rows: json,
  });
}

if (isMain(import.meta.url)) {
  const calls = Number(process.argv[2] ?? 2000);
  await main(Number.isInteger(calls) && calls > 0 ? calls : 2000);
}
