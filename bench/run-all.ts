// Runs every benchmark in sequence, each in its own node process (fresh heap, no shared caches),
// passes its output through, and ends with the JSON line of each for the issue note.
// Run: node --import tsx bench/run-all.ts   (or: npm run bench, which builds the CLI first)
import { spawn } from "node:child_process";
import { join } from "node:path";
import { isMain, printTable, REPO_ROOT } from "./lib.js";

export const BENCHMARKS = [
  "cli-startup.ts",
  "import-vs-git.ts",
  "checkpoint-scale.ts",
  "checkpoint-scale.ts --redis",
  "record-checkpoint.ts",
  "dedup.ts",
  "grep-vs-rg.ts",
  "query.ts",
  "retrieval-quality.ts",
  "mcp-latency.ts",
  "mcp-http-throughput.ts",
  "acp-latency.ts",
  "broker-latency.ts",
  "large-files.ts",
  "large-lines.ts",
  "store-throughput.ts",
  "mount-sync.ts",
  "mount-sync.ts --redis",
  "history.ts",
  "version-growth.ts",
  "console-live.ts",
  // Smaller than the figures' run (100,000 files, 60 s idle, 1 GiB, node_modules): see bench/README.md.
  "mount-scale.ts --files 20000 --idle 20 --big 256 --no-node-modules",
  "mount-scale.ts --redis --files 20000 --idle 20 --big 256 --no-node-modules",
] as const;

function runOne(file: string): Promise<{ code: number; ms: number; json: string[] }> {
  // An entry may carry arguments after the file name ("checkpoint-scale.ts --redis").
  const [name, ...args] = file.split(" ");
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, ["--import", "tsx", join(REPO_ROOT, "bench", name as string), ...args], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const json = out.split("\n").filter((l) => l.startsWith('{"bench":'));
      resolve({ code: code ?? 1, ms: Number(process.hrtime.bigint() - start) / 1e6, json });
    });
  });
}

if (isMain(import.meta.url)) {
  const rows: Array<[string, string, string]> = [];
  const lines: string[] = [];
  let failed = false;
  for (const file of BENCHMARKS) {
    console.log(`\n=== ${file}`);
    const r = await runOne(file);
    rows.push([file, r.code === 0 ? "ok" : `FAILED (exit ${r.code})`, `${(r.ms / 1000).toFixed(1)} s`]);
    lines.push(...r.json);
    failed ||= r.code !== 0;
  }
  printTable("benchmarks run", ["benchmark", "status", "wall time"], rows);
  console.log("\nJSON lines:");
  for (const l of lines) console.log(l);
  process.exitCode = failed ? 1 : 0;
}
