// Whole-tree operations on a generated tree of N files (default 1,000,000; tree-gen.ts), each
// against its natural anchor in the same run: `afs ws import` vs `git init && add -A && commit`
// (time and peak RSS), `afs fs ls` of the big directory vs `ls -la`, `afs fs glob` over the whole
// tree vs `find -name`, `afs cp diff` after one change vs `git diff`, `afs ws export` into an empty
// directory vs `git checkout` into one; then import vs git on a real tree (node_modules).
// Every command is a fresh child process (AFS_DAEMON=off: no resident afs), timed by wall clock,
// its peak RSS read from /usr/bin/time (the largest process of the command).
// Run: nice node --import tsx bench/million.ts [--files N] [--dir DIR] [--work DIR] [--keep] [--no-real]
//   DIR defaults to /dev/shm/afs-million-N (the tree is reused between runs; --keep leaves it); the
//   stores and exports go to --work (default DIR-work): at 1,000,000 files put it on a disk, since
//   .git alone takes ~4.5 GB of tmpfs pages.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { emitJson, fmtBytes, isMain, printTable, REPO_ROOT } from "./lib.js";
import { ensureTree, removeTree } from "./tree-gen.js";

interface Measured {
  ms: number;
  rssKb: number;
  stdout: string;
}

interface Row {
  step: string;
  afs: Measured;
  anchor: Measured;
  anchorName: string;
  note: string;
}

/**
 * No `git gc --auto` after the commit: it detaches and packs the loose objects in the background,
 * which would run during (and slow) the steps measured after it.
 */
const NO_AUTO_GC = { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "gc.auto", GIT_CONFIG_VALUE_0: "0" };
const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist", "cli", "main.js");
const HAVE_TIME = existsSync("/usr/bin/time");

/** Environment for child processes, free of settings that would point them elsewhere. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AFS_DAEMON: "off", ...extra };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

/** Runs a command once; wall time by hrtime, peak RSS by /usr/bin/time (0 without it). */
function measure(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, scratch: string): Measured {
  const timeFile = join(scratch, "time.out");
  const [file, argv] = HAVE_TIME ? ["/usr/bin/time", ["-f", "%M", "-o", timeFile, cmd, ...args]] : [cmd, args];
  const start = process.hrtime.bigint();
  const r = spawnSync(file, argv as string[], { env, cwd, encoding: "utf8", maxBuffer: 1024 ** 3 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.error}`);
  const rssKb = HAVE_TIME ? Number(readFileSync(timeFile, "utf8").trim().split("\n").pop()) : 0;
  return { ms, rssKb, stdout: r.stdout };
}

const lines = (s: string): number => s.split("\n").filter(Boolean).length;

function parseArgs(argv: readonly string[]): {
  files: number;
  dir: string;
  work: string;
  keep: boolean;
  real: boolean;
} {
  let files = 1_000_000;
  let dir = "";
  let work = "";
  let keep = false;
  let real = true;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--files") files = Number((argv[++i] ?? "").replaceAll("_", ""));
    else if (a === "--dir") dir = argv[++i] ?? "";
    else if (a === "--work") work = argv[++i] ?? "";
    else if (a === "--keep") keep = true;
    else if (a === "--no-real") real = false;
    else
      throw new Error(
        `unknown argument ${a}; usage: bench/million.ts [--files N] [--dir DIR] [--work DIR] [--keep] [--no-real]`,
      );
  }
  if (!Number.isInteger(files) || files < 1) throw new Error("--files needs a positive integer");
  const base = existsSync("/dev/shm") ? "/dev/shm" : "/tmp";
  dir ||= join(base, `afs-million-${files}`);
  return { files, dir, work: work || `${dir}-work`, keep, real };
}

/** Import of `tree` by afs and by git, each into a fresh store under `work`. */
function importPair(
  tree: string,
  work: string,
  tag: string,
): { afs: Measured; git: Measured; gitDir: string; home: string } {
  const gitDir = join(work, `git-${tag}`);
  const home = join(work, `home-${tag}`);
  const gitEnv = cleanEnv({
    GIT_DIR: gitDir,
    GIT_WORK_TREE: tree,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    ...NO_AUTO_GC,
  });
  const script = "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -q -m import";
  const git = measure("sh", ["-c", script], gitEnv, tree, work);
  const afs = measure(process.execPath, [CLI, "ws", "import", "big", tree], cleanEnv({ AFS_HOME: home }), work, work);
  return { afs, git, gitDir, home };
}

export async function main(): Promise<void> {
  const { files, dir, work, keep, real } = parseArgs(process.argv.slice(2));
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const rows: Row[] = [];
  let treeFiles = 0;
  let treeBytes = 0;
  /** Each step's JSON line as soon as it is measured, so a long run that is cut short still tells. */
  const record = (row: Row): void => {
    rows.push(row);
    emitJson("million", {
      files: treeFiles,
      bytes: treeBytes,
      step: row.step,
      afs_ms: Math.round(row.afs.ms),
      afs_peak_rss_mb: Math.round(row.afs.rssKb / 1024),
      anchor: row.anchorName,
      anchor_ms: Math.round(row.anchor.ms),
      anchor_peak_rss_mb: Math.round(row.anchor.rssKb / 1024),
      ratio: Math.round((row.afs.ms / row.anchor.ms) * 100) / 100,
      note: row.note || undefined,
    });
  };
  try {
    const info = await ensureTree(dir, { files });
    treeFiles = info.files;
    treeBytes = info.bytes;
    console.log(
      `tree: ${info.files} files, ${info.dirs} directories, ${fmtBytes(info.bytes)} in ${dir} (written in ${info.ms} ms, or reused)`,
    );

    // --- import -------------------------------------------------------------------------
    const imp = importPair(dir, work, "gen");
    if (!imp.afs.stdout.replaceAll(",", "").includes(`${info.files} files`))
      throw new Error(`afs imported something else: ${imp.afs.stdout.trim()}`);
    record({ step: "import", afs: imp.afs, anchor: imp.git, anchorName: "git init+add+commit", note: "" });
    const afsEnv = cleanEnv({ AFS_HOME: imp.home, AFS_WORKSPACE: "big" });
    const gitEnv = cleanEnv({
      GIT_DIR: imp.gitDir,
      GIT_WORK_TREE: dir,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      ...NO_AUTO_GC,
    });

    // --- ls of the big flat directory ---------------------------------------------------
    const ls = measure(process.execPath, [CLI, "fs", "ls", info.bigDir], afsEnv, work, work);
    const lsAnchor = measure("ls", ["-la", join(dir, info.bigDir)], afsEnv, work, work);
    if (lines(ls.stdout) < info.bigDirFiles) throw new Error(`afs fs ls listed ${lines(ls.stdout)} entries`);
    record({
      step: `ls ${info.bigDir} (${info.bigDirFiles} files)`,
      afs: ls,
      anchor: lsAnchor,
      anchorName: "ls -la",
      note: "",
    });

    // --- glob over the whole tree -------------------------------------------------------
    const glob = measure(process.execPath, [CLI, "fs", "glob", "*.md"], afsEnv, work, work);
    const find = measure("find", [dir, "-name", "*.md"], afsEnv, work, work);
    const want = info.extensions.md ?? 0;
    const got = lines(glob.stdout);
    record({
      step: `glob *.md (${want} matches)`,
      afs: glob,
      anchor: find,
      anchorName: "find -name",
      note: got === want && lines(find.stdout) === want ? "" : `afs listed ${got} lines, find ${lines(find.stdout)}`,
    });

    // --- diff after one change ----------------------------------------------------------
    const target = info.rare[0]?.paths[0] as string;
    const changed = `changed by bench/million.ts\n`;
    measure(process.execPath, [CLI, "fs", "write", target, "--content", changed], afsEnv, work, work);
    const head = JSON.parse(measure(process.execPath, [CLI, "cp", "list", "--json"], afsEnv, work, work).stdout) as
      | Array<{ name: string }>
      | { checkpoints: Array<{ name: string }> };
    const headName = (Array.isArray(head) ? head : head.checkpoints)[0]?.name as string;
    const diff = measure(process.execPath, [CLI, "cp", "diff", headName, "--stat"], afsEnv, work, work);
    const original = readFileSync(join(dir, target));
    writeFileSync(join(dir, target), changed);
    let gitDiff: Measured;
    try {
      gitDiff = measure("git", ["diff", "--stat"], gitEnv, dir, work);
    } finally {
      writeFileSync(join(dir, target), original);
    }
    record({
      step: "diff after one change",
      afs: diff,
      anchor: gitDiff,
      anchorName: "git diff --stat",
      note: diff.stdout.includes(target) ? "" : "afs diff did not name the changed file",
    });

    // --- export into an empty directory -------------------------------------------------
    const outAfs = join(work, "export-afs");
    const outGit = join(work, "export-git");
    mkdirSync(outGit);
    const exp = measure(process.execPath, [CLI, "ws", "export", "big", outAfs], afsEnv, work, work);
    rmSync(outAfs, { recursive: true, force: true });
    const checkout = measure(
      "git",
      ["--work-tree", outGit, "checkout", "HEAD", "--", "."],
      { ...gitEnv, GIT_INDEX_FILE: join(work, "export-index") },
      work,
      work,
    );
    record({ step: "export to an empty dir", afs: exp, anchor: checkout, anchorName: "git checkout", note: "" });
    rmSync(outAfs, { recursive: true, force: true });
    rmSync(outGit, { recursive: true, force: true });
    rmSync(imp.gitDir, { recursive: true, force: true });
    rmSync(imp.home, { recursive: true, force: true });

    // --- a real tree --------------------------------------------------------------------
    const nodeModules = join(REPO_ROOT, "node_modules");
    if (real && existsSync(nodeModules)) {
      const r = importPair(nodeModules, work, "real");
      const n = /imported ([\d,]+) files/.exec(r.afs.stdout)?.[1] ?? "?";
      record({
        step: `import node_modules (${n} files)`,
        afs: r.afs,
        anchor: r.git,
        anchorName: "git init+add+commit",
        note: "",
      });
    }

    printTable(
      `whole-tree operations on ${info.files} files / ${fmtBytes(info.bytes)} (one run each, AFS_DAEMON=off)`,
      ["step", "afs ms", "afs peak RSS", "anchor", "anchor ms", "anchor peak RSS", "afs/anchor", "note"],
      rows.map((r) => [
        r.step,
        r.afs.ms.toFixed(0),
        fmtBytes(r.afs.rssKb * 1024),
        r.anchorName,
        r.anchor.ms.toFixed(0),
        fmtBytes(r.anchor.rssKb * 1024),
        (r.afs.ms / r.anchor.ms).toFixed(2),
        r.note,
      ]),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
    if (!keep) removeTree(dir);
  }
}

if (isMain(import.meta.url)) await main();
