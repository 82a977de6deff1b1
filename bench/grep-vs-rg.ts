// Indexed grep against ripgrep on the 4,000-file / 31.5 MiB corpus, in one run: afs `grep` through
// the core operation (in-process), `file_grep` through MCP (the SDK client over stdio to
// `node dist/cli/main.js mcp`), and `rg` on the same files exported to disk. Warm medians (each side
// repeats a search back to back); plus the content index's build speed, its size on disk, and the
// time to re-index after one file changes.
// Run: npm run build && node --import tsx bench/grep-vs-rg.ts [RUNS]
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type GrepArgs, type GrepResult, grep } from "../src/ops/index.js";
import { Afs } from "../src/workspace/afs.js";
import { internalsOf } from "../src/workspace/engine/internals.js";
import { generateCorpus } from "./corpus.js";
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
const WORKSPACE = "bench";
const WARMUP = 3;

interface Search {
  name: string;
  args: GrepArgs;
  /** The same search for rg (after its fixed flags). */
  rg: string[];
  /** Goal for afs time / rg time; null: shown for information. */
  goal: number | null;
}

const SEARCHES: readonly Search[] = [
  { name: "rare literal", args: { pattern: "zzrare_trio_k9q" }, rg: ["-F", "zzrare_trio_k9q"], goal: 0.2 },
  { name: "common literal", args: { pattern: "import" }, rg: ["-F", "import"], goal: 1 },
  // The corpus plants ZZRARE_TRIO_K9Q in one file and zzrare_trio_k9q in three: -i finds 4.
  {
    name: "case-insensitive literal",
    args: { pattern: "ZZRARE_TRIO_K9Q", ignore_case: true },
    rg: ["-i", "-F", "ZZRARE_TRIO_K9Q"],
    goal: 1,
  },
  // A common word case-insensitively: 13,831 lines in 2,575 files, about 2.7 MB through MCP.
  {
    name: "case-insensitive common word",
    args: { pattern: "CHECKPOINT", ignore_case: true },
    rg: ["-i", "-F", "CHECKPOINT"],
    goal: null,
  },
  {
    name: "regex \\b[A-Z][a-z]+ing\\b",
    args: { pattern: "\\b[A-Z][a-z]+ing\\b", regexp: true },
    rg: ["\\b[A-Z][a-z]+ing\\b"],
    goal: 1.5,
  },
];

// rg as afs searches: hidden files too, no ignore files, line numbers; binary files skipped by both.
const RG_FLAGS = ["--no-config", "--hidden", "--no-ignore", "--line-number", "--no-heading", "--color", "never"];

/** Lines of output and files among them, to check that every side found the same. */
interface Found {
  lines: number;
  files: number;
}

const fromResult = (r: GrepResult): Found =>
  r.mode === "matches"
    ? { lines: r.matches.length, files: new Set(r.matches.map((m) => m.path)).size }
    : { lines: 0, files: 0 };

function rg(dir: string, args: readonly string[]): { ms: number; found: Found } {
  const start = process.hrtime.bigint();
  const r = spawnSync("rg", [...RG_FLAGS, ...args, "."], { cwd: dir, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0 && r.status !== 1) throw new Error(`rg ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const lines = r.stdout.split("\n").filter(Boolean);
  return { ms, found: { lines: lines.length, files: new Set(lines.map((l) => l.slice(0, l.indexOf(":")))).size } };
}

function mcpSession(home: string): Promise<StdioSession> {
  // Every matching line comes back, as rg prints them all (the default cap is 1,000 per page).
  return stdioSession(CLI, home, WORKSPACE, { env: { AFS_MAX_RESULTS: "10000000" } });
}

async function mcpGrep(client: Client, args: GrepArgs): Promise<{ ms: number; found: Found }> {
  const { ms, value } = await timeMs(
    () => client.callTool({ name: "file_grep", arguments: { ...args } }) as Promise<CallToolResult>,
  );
  if (value.isError) throw new Error(`file_grep failed: ${JSON.stringify(value.content)}`);
  return { ms, found: fromResult(value.structuredContent as GrepResult) };
}

const sameFound = (a: Found, b: Found): boolean => a.lines === b.lines && a.files === b.files;

export async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 11);
  const haveRg = spawnSync("rg", ["--version"]).status === 0;
  if (!haveRg) throw new Error("rg (ripgrep) is not installed; apt-get install -y ripgrep");
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const work = await makeTempDir("afs-bench-grep-");
  let afs: Afs | null = null;
  try {
    const corpus = join(work, "corpus");
    const info = generateCorpus(corpus);
    const home = join(work, "home");
    afs = await Afs.open({ home, store: `sqlite:${join(home, "afs.db")}`, actor: "bench" });
    await afs.workspaces.import(WORKSPACE, corpus);
    const exported = join(work, "exported");
    await afs.workspaces.export(WORKSPACE, exported);
    console.log(
      `corpus: ${info.files} files, ${fmtBytes(info.bytes)} (${info.uniqueBlobs} distinct contents, ${fmtBytes(info.uniqueBytes)}); imported into workspace ${WORKSPACE} and exported to disk for rg`,
    );

    // --- the content index: build, size, incremental re-index ---------------------------------
    const volume = await afs.workspaces.volume(WORKSPACE);
    const indexes = { text: afs.indexes.text, query: afs.indexes.query };
    const hashes: string[] = [];
    for await (const s of volume.walk("/")) if (s.kind === "file" && s.sha256) hashes.push(s.sha256);
    const built = await timeMs(() => (afs as Afs).indexes.text.build(hashes));
    const mibps = built.value.bytes / 1024 / 1024 / (built.ms / 1000);
    const db = internalsOf(afs).searchDb;
    db.db.pragma("wal_checkpoint(TRUNCATE)");
    const indexBytes = statSync(db.path).size;
    // Where the bytes go: the trigram postings, the blob table, and pages merges left free.
    const tables = db.db.prepare("SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name").all() as {
      name: string;
      bytes: number;
    }[];
    const sizeOf = (prefix: string) => tables.filter((t) => t.name.startsWith(prefix)).reduce((n, t) => n + t.bytes, 0);
    const postings = sizeOf("text_postings") + sizeOf("text_segments");
    const blobTable = sizeOf("text_blobs") + sizeOf("sqlite_autoindex_text_blobs");
    const pageSize = db.db.pragma("page_size", { simple: true }) as number;
    const free = (db.db.pragma("freelist_count", { simple: true }) as number) * pageSize;
    const target = info.rare[0]?.files[0] as string;
    const original = await volume.readFile(target);
    await volume.writeFile(target, Buffer.concat([original, Buffer.from("\nan edit for the re-index bench\n")]), {
      op: "write",
    });
    const after: string[] = [];
    for await (const s of volume.walk("/")) if (s.kind === "file" && s.sha256) after.push(s.sha256);
    const reindex = await timeMs(() => (afs as Afs).indexes.text.build(after));
    const firstAfterEdit = await timeMs(() => grep(volume, { pattern: "an edit for the re-index bench" }, { indexes }));
    await volume.writeFile(target, original, { op: "write" });
    printTable(
      "content index (trigrams of each distinct text blob, FTS5 detail=none)",
      ["figure", "value", "goal"],
      [
        [
          "build, whole corpus",
          `${fmtMs(built.ms)} ms for ${built.value.indexed} blobs / ${fmtBytes(built.value.bytes)} = ${mibps.toFixed(1)} MiB/s`,
          "> 10 MiB/s",
        ],
        [
          "size on disk",
          `${fmtBytes(indexBytes)} = ${((indexBytes / info.bytes) * 100).toFixed(1)}% of the corpus`,
          "",
        ],
        [
          "  of which",
          `trigram postings ${fmtBytes(postings)}, blob table ${fmtBytes(blobTable)}, free pages ${fmtBytes(free)}`,
          "",
        ],
        ["re-index after one file changes", `${fmtMs(reindex.ms)} ms (${reindex.value.indexed} blob indexed)`, ""],
        ["first grep after that edit", `${fmtMs(firstAfterEdit.ms)} ms`, ""],
      ],
    );

    // --- searches: afs core, afs MCP, rg; warm medians ----------------------------------------
    const mcp = await mcpSession(home);
    const rows: (string | number)[][] = [];
    const json: Record<string, unknown>[] = [];
    let allMet = true;
    try {
      for (const s of SEARCHES) {
        // Each side runs its searches back to back (warm, as an agent repeats searches), in blocks
        // whose order rotates from one search to the next.
        const sides: (() => Promise<{ ms: number; found: Found }>)[] = [
          async () => {
            const { ms, value } = await timeMs(() => grep(volume, s.args, { indexes }));
            return { ms, found: fromResult(value) };
          },
          () => mcpGrep(mcp.client, s.args),
          async () => rg(exported, s.rg),
        ];
        const samples: number[][] = [[], [], []];
        const seen: Found[] = [];
        for (let k = 0; k < sides.length; k++) {
          const side = (SEARCHES.indexOf(s) + k) % sides.length;
          for (let i = 0; i < WARMUP + runs; i++) {
            const r = await (sides[side] as () => Promise<{ ms: number; found: Found }>)();
            seen[side] ??= r.found;
            if (i >= WARMUP) samples[side]?.push(r.ms);
          }
        }
        const [core, viaMcp, viaRg] = samples as [number[], number[], number[]];
        const f = { core: seen[0] as Found, mcp: seen[1] as Found, rg: seen[2] as Found };
        if (!sameFound(f.core, f.rg) || !sameFound(f.mcp, f.rg)) {
          throw new Error(
            `${s.name}: afs found ${JSON.stringify(f.core)} (MCP ${JSON.stringify(f.mcp)}), rg ${JSON.stringify(f.rg)}`,
          );
        }
        const [c, m, r] = [median(core), median(viaMcp), median(viaRg)];
        const worst = Math.max(c, m) / r;
        const met = s.goal === null ? null : worst <= s.goal;
        if (met === false) allMet = false;
        rows.push([
          s.name,
          `${f.rg.lines} / ${f.rg.files}`,
          fmtMs(c),
          fmtMs(m),
          fmtMs(r),
          `${(c / r).toFixed(2)}x`,
          `${(m / r).toFixed(2)}x`,
          s.goal === null ? "-" : `<= ${s.goal}x ${met ? "met" : "MISSED"}`,
        ]);
        json.push({
          search: s.name,
          lines: f.rg.lines,
          files: f.rg.files,
          core_ms: round(c),
          mcp_ms: round(m),
          rg_ms: round(r),
          core_ratio: Math.round((c / r) * 100) / 100,
          mcp_ratio: Math.round((m / r) * 100) / 100,
          goal: s.goal,
          goal_met: met,
        });
      }
    } finally {
      await mcp.close();
    }
    printTable(
      `warm searches, median of ${runs} after ${WARMUP} warm-up (ms); rg is a process per search, as an agent runs it`,
      ["search", "lines / files", "afs core", "afs MCP", "rg", "core/rg", "MCP/rg", "goal (both)"],
      rows,
    );
    emitJson("grep-vs-rg", {
      files: info.files,
      bytes: info.bytes,
      runs,
      index_build_ms: round(built.ms),
      index_build_mib_per_s: Math.round(mibps * 10) / 10,
      index_bytes: indexBytes,
      index_ratio: Math.round((indexBytes / info.bytes) * 1000) / 1000,
      index_postings_bytes: postings,
      reindex_one_file_ms: round(reindex.ms),
      first_grep_after_edit_ms: round(firstAfterEdit.ms),
      searches: json,
      goals_met: allMet && mibps > 10,
    });
  } finally {
    await afs?.close();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) await main();
