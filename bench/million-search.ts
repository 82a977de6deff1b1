// Search over a very large tree (issue 22): the content index built by the background builder
// (`afs index builder`, run here in the foreground to time it) against the import it follows, in
// time and peak RSS; a rare literal in a warm process (in-process grep, repeated, median; and
// through `file_grep` in an `afs mcp` server, with the server's peak RSS) and in a cold CLI process against `git grep` and `rg`; a common literal with -c against `rg --count`; the
// same on a real tree (this project's node_modules). Every afs answer is checked against rg's.
// The first cold search after the build (answered by the head tree's map the builder wrote) is
// reported beside one with the maps dropped (it lists the tree, as the first search did before).
// Run: npm run build && nice node --import tsx bench/million-search.ts [--files N] [--tree DIR] [--git-base DIR] [--no-real | --real-only]
// (--tree DIR: a tree of your own, or one bench/tree-gen.ts made, whose planted literals are then used)
// (default 200,000 files, generated under /dev/shm when it exists; the 1,000,000-file figures:
// --files 1000000, which needs ~10 GB of memory-backed disk for the tree, the store and .git).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { grep } from "../src/ops/index.js";
import { Afs } from "../src/workspace/afs.js";
import { afsCli, type CliRun, emitJson, fmtMs, median, printTable, REPO_ROOT, removeDir, round } from "./lib.js";
import { ensureTree, infoPath, type TreeInfo } from "./tree-gen.js";
import { type WarmServer, warmServerSearch } from "./warm-server.js";

const MAIN = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
// The literals searched for: bench/tree-gen.ts's planted rare one and its common word on a generated
// tree; these on a tree given with --tree (and on node_modules, where the rare one is absent).
let RARE = "ZZRARE_SOLO_7f3a";
let COMMON = "import";
const WARM_RUNS = 20;
const COLD_RUNS = 3;

type Run = CliRun;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** A command's wall time and, through GNU time when the machine has it, its peak RSS. */
function timed(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Run {
  const gnuTime = existsSync("/usr/bin/time");
  const start = performance.now();
  const r = gnuTime
    ? spawnSync("/usr/bin/time", ["-f", "BENCH_MAX_RSS_KB=%M", cmd, ...args], { cwd, env, maxBuffer: 1 << 30 })
    : spawnSync(cmd, args, { cwd, env, maxBuffer: 1 << 30 });
  const ms = performance.now() - start;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const kb = /BENCH_MAX_RSS_KB=(\d+)/.exec(r.stderr.toString())?.[1];
  return { ms, rss: kb ? Number(kb) * 1024 : Number.NaN, cpu: Number.NaN, stdout: r.stdout.toString() };
}

/** An afs CLI process (resident afs off, no builder of its own), with its peak RSS from the probe. */
const afs = (home: string, args: string[], cwd: string): Run => afsCli(MAIN, home, args, cwd);

/** Drops the maps of contents to paths from the home's index file (the search then lists the tree). */
function dropMaps(home: string): void {
  const db = new Database(join(home, "afs.index.db"));
  try {
    db.exec("DELETE FROM text_tree_files; DELETE FROM text_trees");
  } finally {
    db.close();
  }
}

const lines = (out: string): string[] => out.split("\n").filter(Boolean).sort();
/** rg prints "./path[:count]" below its directory; afs "/path[:count]". */
const rgPaths = (out: string): string[] => lines(out).map((l) => l.replace(/^\.\//, "/"));

interface TreeFigures {
  tree: string;
  files: number;
  import: Run;
  build: Run;
  rareWarm: number;
  /** The rare literal through `file_grep` in one `afs mcp` server, with that server's memory. */
  rareServer: WarmServer;
  rareCold: Run;
  /** The first cold search after the build (the builder mapped the head tree: no listing). */
  rareFirst: Run;
  /** A cold search with the maps dropped: lists the tree and writes its map, as the first did before the builder mapped heads. */
  rareUnmapped: Run;
  /** Whether `afs index status` says the builder mapped the head tree. */
  mapped: boolean;
  commonWarm: number;
  commonCold: Run;
  rg: { rare: Run; common: Run };
  git?: { add: Run; rare: Run };
  /** Whether afs's answers equal rg's (and git grep's). */
  agree: { rare: boolean; common: boolean };
}

async function measureTree(label: string, tree: string, work: string, withGit: boolean): Promise<TreeFigures> {
  const home = join(work, `home-${label}`);
  const imported = afs(home, ["ws", "import", "big", tree], work);
  const files = Number(/imported (\d+) files?/.exec(imported.stdout.replace(/,/g, ""))?.[1] ?? Number.NaN);
  // The background builder's work, in the foreground so it is timed alone.
  const build = afs(home, ["index", "builder"], work);
  const status = JSON.parse(afs(home, ["index", "status", "--json"], work).stdout) as {
    workspaces: { mapped?: boolean }[];
    text: { building?: unknown };
  };
  if (status.text.building) throw new Error("the builder left its claim behind");
  const mapped = status.workspaces[0]?.mapped === true;

  // "." given: without a path, rg reads its standard input when that is not a terminal.
  const rg = {
    // -uu: hidden and ignored files too, as afs imports them (binary files both skip).
    rare: timed("rg", ["-uu", "-l", "-F", RARE, "."], tree),
    common: timed("rg", ["-uu", "--count", "-F", COMMON, "."], tree),
  };
  const rgRare = rgPaths(rg.rare.stdout);
  // Cold: a new CLI process per search (the median of a few), page cache warm like rg's.
  const coldRuns = Array.from({ length: COLD_RUNS }, () =>
    afs(home, ["fs", "grep", "-l", RARE, "--workspace", "big"], work),
  );
  const rareFirst = coldRuns[0] as Run;
  const rareCold = [...coldRuns].sort((a, b) => a.ms - b.ms)[COLD_RUNS >> 1] as Run;
  // The maps dropped: the next search lists the tree (and writes the map again), which is what the
  // first search after a build did before the builder wrote maps.
  dropMaps(home);
  const rareUnmapped = afs(home, ["fs", "grep", "-l", RARE, "--workspace", "big"], work);
  const agree = {
    rare: [rareCold, rareFirst, rareUnmapped].every((r) => lines(r.stdout).join() === rgRare.join()),
    common: false,
  };
  const commonCold = afs(home, ["fs", "grep", "-c", COMMON, "--workspace", "big"], work);
  // rg and afs tell binary files apart a little differently (afs: a NUL in the first 8 KiB), so on a
  // real tree a few counts may differ: reported, not fatal.
  agree.common = lines(commonCold.stdout).join() === rgPaths(rg.common.stdout).join();

  // Warm in a real server, whose memory is its own.
  const rareServer = await warmServerSearch(MAIN, home, "big", RARE, WARM_RUNS);
  if (rareServer.files.join() !== rgRare.join()) agree.rare = false;
  // Warm: one engine in this process (as the MCP server or the resident afs keeps), searched again and again.
  const engine = await Afs.open({ home, env: { ...process.env, AFS_INDEX_BACKGROUND: "off" }, cwd: work });
  let rareWarm = Number.NaN;
  let commonWarm = Number.NaN;
  try {
    const volume = await engine.workspaces.volume("big");
    const indexes = { text: engine.indexes.text, query: engine.indexes.query };
    const samples: number[] = [];
    for (let i = 0; i < WARM_RUNS + 2; i++) {
      const start = performance.now();
      const r = await grep(volume, { pattern: RARE, files_with_matches: true }, { indexes });
      if (i >= 2) samples.push(performance.now() - start);
      if (r.mode !== "files" || r.files.join() !== rgRare.join()) agree.rare = false;
    }
    rareWarm = median(samples);
    const common: number[] = [];
    // Twice: the second is the warm one (the first filled the text cache).
    for (let i = 0; i < 2; i++) {
      const start = performance.now();
      await grep(volume, { pattern: COMMON, count: true }, { indexes });
      common.push(performance.now() - start);
    }
    commonWarm = common[1] as number;
  } finally {
    await engine.close();
  }

  let git: TreeFigures["git"];
  if (withGit) {
    // --git-base DIR: .git elsewhere (at 1M files it is ~4 GB loose, which a memory-backed disk may not hold).
    const gitDir = join(arg("--git-base") ?? work, `git-${label}-${process.pid}`);
    const env = { ...process.env, GIT_DIR: gitDir, GIT_WORK_TREE: tree };
    spawnSync("git", ["init", "-q"], { env });
    const start = performance.now();
    const add = timed("git", ["add", "-A"], tree, env);
    timed("git", ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"], tree, env);
    add.ms = performance.now() - start;
    const rare = timed("git", ["grep", "-l", "-F", RARE], tree, env);
    if (
      lines(rare.stdout)
        .map((p) => `/${p}`)
        .join() !== rgRare.join()
    )
      agree.rare = false;
    git = { add, rare };
    await removeDir(gitDir);
  }
  await removeDir(home);
  const figures = {
    tree: label,
    files,
    import: imported,
    build,
    rareWarm,
    rareServer,
    rareCold,
    rareFirst,
    rareUnmapped,
    mapped,
    commonWarm,
    commonCold,
    rg,
    git,
    agree,
  };
  // Each tree's line as soon as it is measured: a later tree's failure loses nothing.
  emitFigures(figures);
  return figures;
}

function emitFigures(r: TreeFigures): void {
  emitJson("million-search", {
    tree: r.tree,
    files: r.files,
    import_ms: round(r.import.ms),
    import_rss_mb: Math.round(r.import.rss / 1e6),
    import_cpu_ms: round(r.import.cpu),
    build_ms: round(r.build.ms),
    build_cpu_ms: round(r.build.cpu),
    build_rss_mb: Math.round(r.build.rss / 1e6),
    build_over_import: Math.round((r.build.ms / r.import.ms) * 100) / 100,
    rare_warm_ms: round(r.rareWarm),
    rare_warm_mcp_ms: round(r.rareServer.ms),
    rare_warm_mcp_peak_rss_mb: Math.round(r.rareServer.peakRss / 1e6),
    rare_warm_mcp_rss_mb: Math.round(r.rareServer.rss / 1e6),
    rare_cold_ms: round(r.rareCold.ms),
    rare_cold_rss_mb: Math.round(r.rareCold.rss / 1e6),
    head_mapped_by_build: r.mapped,
    rare_first_cold_ms: round(r.rareFirst.ms),
    rare_first_cold_rss_mb: Math.round(r.rareFirst.rss / 1e6),
    rare_unmapped_cold_ms: round(r.rareUnmapped.ms),
    rare_unmapped_cold_rss_mb: Math.round(r.rareUnmapped.rss / 1e6),
    rg_rare_ms: round(r.rg.rare.ms),
    ...(r.git ? { git_grep_rare_ms: round(r.git.rare.ms), git_add_commit_ms: round(r.git.add.ms) } : {}),
    common_count_cold_ms: round(r.commonCold.ms),
    common_count_warm_ms: round(r.commonWarm),
    rg_common_count_ms: round(r.rg.common.ms),
    agrees_with_rg: r.agree,
  });
}

async function main(): Promise<void> {
  const files = Number(arg("--files") ?? 200_000);
  const base = existsSync("/dev/shm") ? "/dev/shm" : undefined;
  const work = await mkdtemp(join(base ?? (await import("node:os")).tmpdir(), "afs-million-"));
  const results: TreeFigures[] = [];
  try {
    let tree = arg("--tree");
    if (process.argv.includes("--real-only")) tree = "";
    else if (tree && existsSync(infoPath(tree))) {
      // A tree bench/tree-gen.ts made: its own planted literals.
      const info = JSON.parse(readFileSync(infoPath(tree), "utf8")) as TreeInfo;
      RARE = info.rare[0]?.literal ?? RARE;
      COMMON = info.common.literal;
    } else if (!tree) {
      tree = join(work, "tree");
      const info = await ensureTree(tree, { files });
      RARE = info.rare[0]?.literal ?? RARE;
      COMMON = info.common.literal;
      console.error(`generated ${files} files in ${(info.ms / 1000).toFixed(1)} s`);
    }
    if (tree) results.push(await measureTree(`generated-${files}`, tree, work, true));
    if (!process.argv.includes("--no-real")) {
      results.push(await measureTree("node_modules", join(REPO_ROOT, "node_modules"), work, false));
    }
  } finally {
    await removeDir(work);
  }
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const mb = (b: number): string => (Number.isNaN(b) ? "?" : `${Math.round(b / 1e6)} MB`);
  printTable(
    "Search over a large tree: afs (index built by the background builder) vs git grep and rg",
    [
      "tree",
      "files",
      "import",
      "index build",
      "rare warm",
      "rare warm, afs mcp",
      "rare cold",
      "1st cold after build",
      "unmapped cold",
      "rg rare",
      "git grep rare",
      "-c common",
      "rg -c",
    ],
    results.map((r) => [
      r.tree,
      r.files,
      `${s(r.import.ms)} (CPU ${s(r.import.cpu)}), ${mb(r.import.rss)}`,
      `${s(r.build.ms)} (CPU ${s(r.build.cpu)}), ${mb(r.build.rss)}`,
      `${fmtMs(r.rareWarm)} ms`,
      `${fmtMs(r.rareServer.ms)} ms, peak ${mb(r.rareServer.peakRss)}`,
      `${fmtMs(r.rareCold.ms)} ms, ${mb(r.rareCold.rss)}`,
      `${fmtMs(r.rareFirst.ms)} ms, ${mb(r.rareFirst.rss)}`,
      `${fmtMs(r.rareUnmapped.ms)} ms, ${mb(r.rareUnmapped.rss)}`,
      `${fmtMs(r.rg.rare.ms)} ms`,
      r.git ? `${fmtMs(r.git.rare.ms)} ms (git add+commit ${s(r.git.add.ms)})` : "-",
      `cold ${s(r.commonCold.ms)}, warm ${s(r.commonWarm)}`,
      s(r.rg.common.ms),
    ]),
  );
}

await main();
