// Per-operation latency of brokered files/read and files/write (2 KiB) through `afs broker`, against
// the same MCP server doing the same reads/writes on disk itself with node:fs; and the throughput
// of a 50 MiB chunked read (1 MiB files/read chunks) through the broker. An SDK host Client starts
// the built CLI (`node dist/cli/main.js broker --root DIR --consent allow -- fixture-server`) and
// calls the server's `bench` tool, which does N operations and reports per-op times measured inside
// the server, so both sides pay the same tool-call overhead once per block, not per op.
// Run: npm run build && node --import tsx bench/broker-latency.ts [OPS]
import { createHash, randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { emitJson, fmtMs, isMain, makeTempDir, printTable, REPO_ROOT, removeDir, round, summarize } from "./lib.js";

const MAIN = join(REPO_ROOT, "dist/cli/main.js");
const SERVER = join(REPO_ROOT, "test/broker/fixture-server.ts");
const SIZE = 2048;
const FILES = 100;
const WARMUP = 200;
/** Operations per tool call; brokered and direct blocks alternate so load drift touches both. */
const BLOCK = 250;
const BIG_MIB = 50;

type Via = "broker" | "disk";
type Op = "read" | "write";

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<unknown> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  return (r.structuredContent as { value: unknown }).value;
}

export async function main(ops = 2000): Promise<void> {
  const work = await makeTempDir("afs-bench-broker-");
  const root = join(work, "root");
  const disk = join(work, "disk");
  const load0 = loadavg();
  let stderr = "";
  let client: Client | null = null;
  try {
    for (const d of [root, disk]) {
      await mkdir(d);
      for (let i = 0; i < FILES; i++) await writeFile(join(d, `b${i}.txt`), "y".repeat(SIZE));
    }
    const big = randomBytes(BIG_MIB * 1024 * 1024);
    await writeFile(join(root, "big.bin"), big);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "broker", "--root", root, "--consent", "allow", "--", process.execPath, "--import", "tsx", SERVER],
      cwd: REPO_ROOT,
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    client = new Client({ name: "afs-bench-host", version: "1.0.0" });
    await client.connect(transport);
    await call(client, "run", { steps: [{ op: "consent", message: "benchmark", paths: ["."] }] });

    const samples: Record<`${Op} ${Via}`, number[]> = {
      "read broker": [],
      "read disk": [],
      "write broker": [],
      "write disk": [],
    };
    // One root: brokered paths are relative to it.
    const dirOf = (via: Via) => (via === "broker" ? "" : disk);
    for (const op of ["read", "write"] as const) {
      for (const via of ["broker", "disk"] as const) {
        await call(client, "bench", { via, op, n: WARMUP, size: SIZE, dir: dirOf(via) });
      }
      for (let done = 0; done < ops; done += BLOCK) {
        for (const via of ["broker", "disk"] as const) {
          const n = Math.min(BLOCK, ops - done);
          const { ms } = (await call(client, "bench", { via, op, n, size: SIZE, dir: dirOf(via) })) as { ms: number[] };
          samples[`${op} ${via}`].push(...ms);
        }
      }
    }

    const start = process.hrtime.bigint();
    const [r] = (await call(client, "run", { steps: [{ op: "sha", path: "big.bin" }] })) as Array<{
      ok?: { sha256: string; chunks: number };
    }>;
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r?.ok?.sha256 !== createHash("sha256").update(big).digest("hex")) throw new Error("50 MiB read: wrong bytes");
    report(samples, { seconds, chunks: r.ok.chunks }, ops, load0);
  } catch (e) {
    if (stderr) console.error(`--- afs broker stderr:\n${stderr}`);
    throw e;
  } finally {
    await client?.close();
    await removeDir(work);
  }
}

function report(
  samples: Record<string, number[]>,
  big: { seconds: number; chunks: number },
  ops: number,
  load0: number[],
): void {
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(" ");
  console.log(
    `environment: node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim() ?? "?"}), load average ${fmtLoad(load0)} at start, ${fmtLoad(loadavg())} at end`,
  );
  const rows: Array<Array<string | number>> = [];
  const json: Record<string, unknown> = { ops, warmup: WARMUP, block: BLOCK };
  for (const op of ["read", "write"]) {
    const b = summarize(samples[`${op} broker`] ?? []);
    const d = summarize(samples[`${op} disk`] ?? []);
    rows.push([
      `${op} 2 KiB`,
      ops,
      fmtMs(b.p50),
      fmtMs(b.p95),
      fmtMs(d.p50),
      fmtMs(d.p95),
      `${(b.p50 / d.p50).toFixed(1)}x`,
      `${(b.p95 / d.p95).toFixed(1)}x`,
    ]);
    Object.assign(json, {
      [`${op}_broker_p50_ms`]: round(b.p50),
      [`${op}_broker_p95_ms`]: round(b.p95),
      [`${op}_disk_p50_ms`]: round(d.p50),
      [`${op}_disk_p95_ms`]: round(d.p95),
    });
  }
  printTable(
    "Brokered file ops through afs broker vs. the server's own node:fs, timed inside the server (ms; ratio = broker / disk)",
    ["op", "ops", "broker p50", "broker p95", "disk p50", "disk p95", "p50 ratio", "p95 ratio"],
    rows,
  );
  const mibps = BIG_MIB / big.seconds;
  console.log(
    `\n${BIG_MIB} MiB chunked read through the broker (${big.chunks} files/read of 1 MiB, base64): ${big.seconds.toFixed(2)} s, ${mibps.toFixed(1)} MiB/s`,
  );
  console.log(
    `${WARMUP} warm-up ops per side and op, then blocks of ${BLOCK} ops alternating broker and disk; ${FILES} distinct 2 KiB files per side.`,
  );
  emitJson("broker-latency", { ...json, read_50mib_s: round(big.seconds), read_mib_per_s: round(mibps) });
}

if (isMain(import.meta.url)) await main(Number(process.argv[2] ?? 2000));
