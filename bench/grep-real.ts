// Indexed grep against ripgrep on real trees (by default this project's node_modules, and the
// typescript package alone): the five searches of the "afs loses to rg on a real tree" issue, through
// the core op and through MCP's file_grep, with rg on the same files exported to disk; interleaved
// medians, every result checked line for line against rg's; plus the first search (indexing
// included) and the index size against the text it covers.
// Run: npm run build && node --import tsx bench/grep-real.ts [RUNS] [DIR...]
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type GrepArgs, type GrepResult, grep } from "../src/ops/index.js";
import { Afs } from "../src/workspace/afs.js";
import { internalsOf } from "../src/workspace/engine/internals.js";
import {
  emitJson,
  fmtBytes,
  fmtMs,
  isMain,
  makeTempDir,
  median,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  type StdioSession,
  stdioSession,
  timeMs,
} from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const WORKSPACE = "real";
const WARMUP = 2;
const DEFAULT_TREES = [join(REPO_ROOT, "node_modules"), join(REPO_ROOT, "node_modules/typescript")];

interface Search {
  name: string;
  args: GrepArgs;
  /** The same search for rg (after its fixed flags). */
  rg: string[];
  /** Goal for afs MCP time / rg time. */
  goal: number;
}

const SEARCHES: readonly Search[] = [
  { name: "rare literal", args: { pattern: "createHash" }, rg: ["-F", "createHash"], goal: 0.2 },
  { name: "common literal, count", args: { pattern: "import", count: true }, rg: ["--count", "-F", "import"], goal: 1 },
  {
    name: "-i literal, count",
    args: { pattern: "deprecated", ignore_case: true, count: true },
    rg: ["--count", "-i", "-F", "deprecated"],
    goal: 1,
  },
  {
    name: "regex with literal, count",
    args: { pattern: "function\\s+\\w+Sync\\(", regexp: true, count: true },
    rg: ["--count", "function\\s+\\w+Sync\\("],
    goal: 1,
  },
  {
    name: "regex, no literal, count",
    args: { pattern: "\\d{4}-\\d\\d-\\d\\d", regexp: true, count: true },
    rg: ["--count", "\\d{4}-\\d\\d-\\d\\d"],
    goal: 2,
  },
];

// rg as afs searches: hidden files too, no ignore files; binary files skipped by both. ASCII \d and
// \w, as RE2 reads them (rg's default is Unicode classes).
const RG_FLAGS = ["--no-config", "--hidden", "--no-ignore", "--no-unicode", "--no-heading", "--color", "never"];

/** What a search found, as sorted "path:line" or "path:count" keys, to compare sides exactly. */
type Found = string[];

function fromResult(r: GrepResult): Found {
  if (r.mode === "matches") return r.matches.map((m) => `${m.path}:${m.line}`);
  if (r.mode === "counts") return r.counts.map((c) => `${c.path}:${c.count}`);
  return r.files;
}

function rg(dir: string, args: readonly string[]): { ms: number; found: Found } {
  const start = process.hrtime.bigint();
  const r = spawnSync("rg", [...RG_FLAGS, "--line-number", ...args, "."], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 1024 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0 && r.status !== 1) throw new Error(`rg ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const found: Found = [];
  const counting = args.includes("--count");
  for (const line of r.stdout.split("\n")) {
    if (line === "") continue;
    // "./path:line:text" or "./path:count": the path ends at the first ":" followed by digits and ":" or the end.
    const m = counting ? /^\.(\/.*):(\d+)$/.exec(line) : /^\.(\/.*?):(\d+):/.exec(line);
    if (!m) throw new Error(`unexpected rg output: ${line.slice(0, 200)}`);
    found.push(`${m[1]}:${m[2]}`);
  }
  return { ms, found };
}

function mcpSession(home: string): Promise<StdioSession> {
  return stdioSession(CLI, home, WORKSPACE, {
    env: { AFS_MAX_RESULTS: "10000000" },
    nodeArgs: process.env.AFS_BENCH_NODE_ARGS?.split(" ") ?? [],
    stderr: "inherit",
  });
}

async function mcpGrep(client: Client, args: GrepArgs): Promise<{ ms: number; found: Found }> {
  const { ms, value } = await timeMs(
    () =>
      client.callTool({ name: "file_grep", arguments: { ...args } }, undefined, {
        timeout: 600_000,
      }) as Promise<CallToolResult>,
  );
  if (value.isError) throw new Error(`file_grep failed: ${JSON.stringify(value.content)}`);
  return { ms, found: fromResult(value.structuredContent as GrepResult) };
}

/** The first difference between two results, or null when they are the same set. */
function difference(a: Found, b: Found): string | null {
  const sa = new Set(a);
  const sb = new Set(b);
  const onlyA = a.filter((x) => !sb.has(x));
  const onlyB = b.filter((x) => !sa.has(x));
  if (onlyA.length === 0 && onlyB.length === 0 && a.length === b.length) return null;
  return `${onlyA.length} only in afs (${onlyA.slice(0, 3).join(", ")}), ${onlyB.length} only in rg (${onlyB.slice(0, 3).join(", ")})`;
}

async function benchTree(dir: string, runs: number): Promise<Record<string, unknown>> {
  const work = await makeTempDir("afs-bench-real-");
  let afs: Afs | null = null;
  try {
    const home = join(work, "home");
    afs = await Afs.open({ home, store: `sqlite:${join(home, "afs.db")}`, actor: "bench" });
    const imported = await timeMs(() => (afs as Afs).workspaces.import(WORKSPACE, dir));
    const exported = join(work, "exported");
    await afs.workspaces.export(WORKSPACE, exported);
    const volume = await afs.workspaces.volume(WORKSPACE);
    const indexes = { text: afs.indexes.text, query: afs.indexes.query };

    // A first search on the freshly imported tree: indexes every blob, then searches.
    const first = await timeMs(() => grep(volume, { pattern: "createHash", count: true }, { indexes }));
    const db = internalsOf(afs).searchDb;
    db.db.pragma("wal_checkpoint(TRUNCATE)");
    const indexBytes = statSync(db.path).size;
    const text = db.db
      .prepare("SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM text_blobs WHERE state = 0")
      .get() as { n: number; bytes: number };
    const label = basename(dir);
    console.log(
      `\n${label}: ${imported.value.files} files, ${fmtBytes(imported.value.bytes)} imported in ${fmtMs(imported.ms)} ms; ` +
        `${text.n} text blobs, ${fmtBytes(text.bytes)}; first search (indexing included) ${fmtMs(first.ms)} ms; ` +
        `index ${fmtBytes(indexBytes)} = ${((indexBytes / text.bytes) * 100).toFixed(1)}% of the text (goal <= 40%)`,
    );

    const mcp = await mcpSession(home);
    const samples = SEARCHES.map(() => [[], [], []] as [number[], number[], number[]]);
    const seen = SEARCHES.map(() => [] as Found[]);
    try {
      const sides = (s: Search): (() => Promise<{ ms: number; found: Found }>)[] => [
        async () => {
          const { ms, value } = await timeMs(() => grep(volume, s.args, { indexes }));
          return { ms, found: fromResult(value) };
        },
        () => mcpGrep(mcp.client, s.args),
        async () => rg(exported, s.rg),
      ];
      // Interleaved: every round runs every search on every side, the side order rotating, so
      // drift in machine load touches them all alike.
      for (let round = 0; round < WARMUP + runs; round++) {
        for (const [q, s] of SEARCHES.entries()) {
          const fns = sides(s);
          for (let k = 0; k < fns.length; k++) {
            const side = (round + q + k) % fns.length;
            const r = await (fns[side] as () => Promise<{ ms: number; found: Found }>)();
            (seen[q] as Found[])[side] ??= r.found;
            if (round >= WARMUP) samples[q]?.[side]?.push(r.ms);
          }
        }
      }
    } finally {
      await mcp.close();
    }
    const rows: (string | number)[][] = [];
    const json: Record<string, unknown>[] = [];
    for (const [q, s] of SEARCHES.entries()) {
      const [core, viaMcp, viaRg] = (samples[q] as number[][]).map(median) as [number, number, number];
      const [fc, fm, fr] = seen[q] as [Found, Found, Found];
      const diff = difference(fc, fr) ?? difference(fm, fr);
      const ratio = viaMcp / viaRg;
      rows.push([
        s.name,
        String(fr.length),
        fmtMs(core),
        fmtMs(viaMcp),
        fmtMs(viaRg),
        `${(core / viaRg).toFixed(2)}x`,
        `${ratio.toFixed(2)}x`,
        `<= ${s.goal}x ${ratio <= s.goal ? "met" : "MISSED"}`,
        diff === null ? "yes" : `NO: ${diff}`,
      ]);
      json.push({
        search: s.name,
        results: fr.length,
        core_ms: round(core),
        mcp_ms: round(viaMcp),
        rg_ms: round(viaRg),
        mcp_ratio: Math.round(ratio * 100) / 100,
        goal: s.goal,
        same_as_rg: diff === null,
      });
    }
    printTable(
      `${label}: warm searches, median of ${runs} interleaved rounds after ${WARMUP} warm-up (ms)`,
      ["search", "results", "afs core", "afs MCP", "rg", "core/rg", "MCP/rg", "goal (MCP)", "same as rg"],
      rows,
    );
    return {
      tree: dir,
      files: imported.value.files,
      bytes: imported.value.bytes,
      text_bytes: text.bytes,
      first_search_ms: round(first.ms),
      index_bytes: indexBytes,
      index_ratio: Math.round((indexBytes / text.bytes) * 1000) / 1000,
      searches: json,
    };
  } finally {
    await afs?.close();
    await removeDir(work);
  }
}

export async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 7);
  const trees = process.argv.slice(3);
  if (spawnSync("rg", ["--version"]).status !== 0) throw new Error("rg (ripgrep) is not installed");
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const results: Record<string, unknown>[] = [];
  for (const dir of trees.length > 0 ? trees : DEFAULT_TREES) results.push(await benchTree(dir, runs));
  emitJson("grep-real", { runs, trees: results });
}

if (isMain(import.meta.url)) await main();
