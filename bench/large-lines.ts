// Windows of lines of a text file larger than the 512 MiB whole-read limit, in bounded memory: peak
// RSS and wall time of `afs fs lines` (its own CLI process) for a window at the start, the middle
// and the end of a workspace file, beside `wc -l` and `sed -n` on the same file on disk, and the whole
// second half printed (streamed as it is read). With --json (and over MCP) a window also reads to the
// end, for total_lines, so `wc -l` is the fair baseline there.
// Run: npm run build && node --import tsx bench/large-lines.ts [MiB]   (default 600)
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { lines } from "../src/ops/lines.js";
import { Afs } from "../src/workspace/afs.js";
import { emitJson, isMain, makeTempDir, printTable, REPO_ROOT, removeDir } from "./lib.js";

const MAIN = join(REPO_ROOT, "dist/cli/main.js");
const PROBE = join(REPO_ROOT, "test/process/max-rss.mjs");
const MiB = 1024 * 1024;
const LINE_BYTES = 64;
const BLOCK_LINES = MiB / LINE_BYTES;

interface Measured {
  ms: number;
  rssKb: number | null;
  out: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Measured {
  const start = process.hrtime.bigint();
  const r = spawnSync(command, args, { env, encoding: "utf8", maxBuffer: 16 * MiB });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const kb = /AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr)?.[1];
  return { ms, rssKb: kb === undefined ? null : Number(kb), out: r.stdout };
}

/** A file of numbered 64-byte lines, `mib` MiB, written a MiB at a time. */
async function writeText(path: string, mib: number): Promise<number> {
  const line = (n: number) => `${`line ${String(n).padStart(10, "0")} `.padEnd(LINE_BYTES - 1, ".")}\n`;
  const block = Buffer.from(Array.from({ length: BLOCK_LINES }, () => line(0)).join(""));
  const out = createWriteStream(path);
  for (let b = 0; b < mib; b++) {
    for (let i = 0; i < BLOCK_LINES; i++) {
      block.write(String(b * BLOCK_LINES + i + 1).padStart(10, "0"), i * LINE_BYTES + 5, "latin1");
    }
    if (!out.write(Buffer.from(block))) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
  return mib * BLOCK_LINES;
}

async function main(mib: number): Promise<void> {
  const work = await makeTempDir("afs-bench-lines-");
  try {
    const src = join(work, "src");
    await mkdir(src);
    const file = join(src, "big.txt");
    const lineCount = await writeText(file, mib);
    const env: NodeJS.ProcessEnv = { ...process.env, AFS_HOME: join(work, "home"), AFS_ACTOR: "bench" };
    for (const k of ["AFS_STORE", "AFS_WORKSPACE"]) delete env[k];
    const imported = run(process.execPath, ["--import", PROBE, MAIN, "ws", "import", "bench", src], env);
    const rows: Array<{ case: string; tool: string } & Measured> = [];
    rows.push({ case: "import", tool: "afs ws import", ...imported });
    rows.push({ case: "count lines", tool: "wc -l", ...run("wc", ["-l", file], env) });
    for (const [name, start] of [
      ["start", 1],
      ["middle", Math.floor(lineCount / 2)],
      ["end", lineCount - 4],
    ] as const) {
      const end = start + 4;
      const args = ["fs", "lines", "/big.txt", String(start), String(end), "--workspace", "bench"];
      const a = run(process.execPath, ["--import", PROBE, MAIN, ...args], env);
      const s = run("sed", ["-n", `${start},${end}p;${end}q`, file], env);
      if (a.out.trimEnd() !== s.out.trimEnd()) throw new Error(`afs and sed differ at ${name}`);
      rows.push({ case: `5 lines at the ${name}`, tool: "afs fs lines", ...a });
      rows.push({ case: `5 lines at the ${name}`, tool: "sed -n (stops after)", ...s });
    }
    // The whole second half: printed as it is read (the CLI streams a window; --json would hold it).
    const half = Math.floor(lineCount / 2);
    const quote = (a: string): string => `'${a.replace(/'/g, "'\\''")}'`;
    const piped = (argv: string[]): Measured =>
      run("bash", ["-c", `set -o pipefail; ${argv.map(quote).join(" ")} | md5sum`], env);
    const a = piped([
      process.execPath,
      "--import",
      PROBE,
      MAIN,
      "fs",
      "lines",
      "/big.txt",
      String(half),
      "-1",
      "--workspace",
      "bench",
    ]);
    const s = piped(["sed", "-n", `${half},$p`, file]);
    if (a.out !== s.out) throw new Error("afs and sed differ on the second half");
    const halfCase = `lines ${half}-${lineCount} (${Math.round(mib / 2)} MiB) | md5sum`;
    rows.push({ case: halfCase, tool: "afs fs lines", ...a });
    rows.push({ case: halfCase, tool: "sed -n", ...s });
    // In a long-lived process (afs mcp/serve): file_lines answers total_lines, so its first window
    // of a file reads to the end; later windows of the same content stop at their end.
    const afs = await Afs.open({ home: join(work, "home"), actor: "bench" });
    try {
      const volume = await afs.workspaces.volume("bench");
      for (const [label, start] of [
        ["first call", 1],
        ["next call, later window", 1000],
        ["next call, middle window", half],
      ] as const) {
        const t = process.hrtime.bigint();
        const r = await lines(volume, { path: "/big.txt", start, end: start + 4 });
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (r.total_lines !== lineCount) throw new Error(`file_lines counted ${r.total_lines} lines, not ${lineCount}`);
        rows.push({ case: `file_lines 5 lines, ${label}`, tool: "in process (afs mcp)", ms, rssKb: null, out: "" });
      }
    } finally {
      await afs.close();
    }
    printTable(
      `Windows of a ${mib} MiB text file (${lineCount} lines) in a workspace: wall time and peak RSS per process`,
      ["case", "tool", "time", "peak RSS"],
      rows.map((r) => [
        r.case,
        r.tool,
        `${(r.ms / 1000).toFixed(2)} s`,
        r.rssKb === null ? "-" : `${(r.rssKb / 1000).toFixed(0)} MB`,
      ]),
    );
    emitJson("large-lines", {
      mib,
      lines: lineCount,
      rows: rows.map(({ out: _, ...r }) => r),
    });
  } finally {
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const mib = Number(process.argv[2] ?? 600);
  await main(Number.isInteger(mib) && mib > 0 ? mib : 600);
}
