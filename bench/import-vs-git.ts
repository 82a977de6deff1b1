// Import speed against git: the 4,000-file / 31.5 MiB corpus taken into a fresh afs home (through
// the built CLI and in-process) versus `git init && git add -A && git commit` into a fresh .git.
// Median of 3 rounds each; the goal is afs/git <= 1.0.
// Run: node --import tsx bench/import-vs-git.ts   (AFS_BENCH_CLI=path overrides dist/cli/main.js)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { Afs } from "../src/workspace/afs.js";
import { generateCorpus } from "./corpus.js";
import {
  diskBytes,
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
  timeMs,
} from "./lib.js";

const ROUNDS = 3;
const GIT_SCRIPT = "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -q -m import";

/** Environment for child processes, free of settings that would point them elsewhere. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"]) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.error}`);
  return { ms, stdout: r.stdout };
}

/** git on the same tree: a separate GIT_DIR so no .git appears inside the corpus. */
function gitImport(corpus: string, gitDir: string): number {
  // Neither the user's nor the system's git config may change what git does here.
  const env = cleanEnv({
    GIT_DIR: gitDir,
    GIT_WORK_TREE: corpus,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
  });
  return run("sh", ["-c", GIT_SCRIPT], env, corpus).ms;
}

function gitFileCount(corpus: string, gitDir: string): number {
  const env = cleanEnv({
    GIT_DIR: gitDir,
    GIT_WORK_TREE: corpus,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
  });
  return run("git", ["ls-tree", "-r", "--name-only", "HEAD"], env, corpus).stdout.split("\n").filter(Boolean).length;
}

function cliImport(cli: string, corpus: string, home: string, files: number): number {
  const env = cleanEnv({ AFS_HOME: home });
  const { ms, stdout } = run(process.execPath, [cli, "ws", "import", "bench", corpus], env, dirname(corpus));
  if (!stdout.replaceAll(",", "").includes(`${files} files`))
    console.error(`note: unexpected CLI output: ${stdout.trim()}`);
  return ms;
}

async function inProcessImport(corpus: string, home: string): Promise<{ ms: number; closeMs: number; files: number }> {
  const afs = await Afs.open({ home, store: `sqlite:${join(home, "afs.db")}`, actor: "bench" });
  try {
    const { ms, value } = await timeMs(() => afs.workspaces.import("bench", corpus));
    const closed = await timeMs(() => afs.close());
    return { ms, closeMs: closed.ms, files: value.files };
  } catch (e) {
    await afs.close();
    throw e;
  }
}

/** Newest modification time of the TypeScript sources, to warn about a stale dist/. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith(".ts")) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

export async function main(): Promise<void> {
  const work = await makeTempDir("afs-bench-import-");
  try {
    const corpus = join(work, "corpus");
    const info = generateCorpus(corpus);
    console.log(`corpus: ${info.files} files, ${info.bytes} bytes (${fmtBytes(info.bytes)}), ${info.dirs} directories`);

    const cli = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist", "cli", "main.js");
    const haveCli = existsSync(cli);
    if (!haveCli) console.log(`note: ${cli} is missing (run npm run build); timing the in-process import only`);
    else if (statSync(cli).mtimeMs < newestSource(join(REPO_ROOT, "src"))) {
      console.log(`note: ${cli} is older than src/ (run npm run build for current figures)`);
    }

    const git: number[] = [];
    const viaCli: number[] = [];
    const inProc: number[] = [];
    const closeMs: number[] = [];
    let gitBytes = 0;
    let afsBytes = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // Each round: fresh .git, fresh AFS_HOME; the order rotates so no tool always goes first.
      const steps: Array<() => Promise<void>> = [
        async () => {
          const gitDir = join(work, `git-${r}`);
          git.push(gitImport(corpus, gitDir));
          if (r === 0) {
            const n = gitFileCount(corpus, gitDir);
            if (n !== info.files) throw new Error(`git committed ${n} files, expected ${info.files}`);
          }
          gitBytes = await diskBytes(gitDir);
          await removeDir(gitDir);
        },
        async () => {
          const home = join(work, `home-inproc-${r}`);
          const res = await inProcessImport(corpus, home);
          if (res.files !== info.files) throw new Error(`afs imported ${res.files} files, expected ${info.files}`);
          inProc.push(res.ms);
          closeMs.push(res.closeMs);
          afsBytes = await diskBytes(home);
          await removeDir(home);
        },
      ];
      if (haveCli) {
        steps.push(async () => {
          const home = join(work, `home-cli-${r}`);
          viaCli.push(cliImport(cli, corpus, home, info.files));
          await removeDir(home);
        });
      }
      for (let i = 0; i < steps.length; i++) await (steps[(i + r) % steps.length] as () => Promise<void>)();
    }

    const gitMs = median(git);
    const rows: Array<[string, number[], string]> = [
      ["git init + add -A + commit", git, "1.00"],
      ...(haveCli
        ? [["afs ws import (CLI process)", viaCli, (median(viaCli) / gitMs).toFixed(2)] as [string, number[], string]]
        : []),
      ["Afs.importDirectory (in-process)", inProc, (median(inProc) / gitMs).toFixed(2)],
    ];
    printTable(
      `import of ${info.files} files / ${fmtBytes(info.bytes)}: median of ${ROUNDS} (ms)`,
      ["method", "median", "runs", "ratio vs git"],
      rows.map(([name, xs, ratio]) => [name, fmtMs(median(xs)), xs.map(fmtMs).join(" / "), ratio]),
    );
    const headline = haveCli ? median(viaCli) : median(inProc);
    const ratio = headline / gitMs;
    console.log(
      `\nafs/git = ${ratio.toFixed(2)} (${haveCli ? "CLI" : "in-process; CLI not built"}); goal <= 1.0: ${ratio <= 1 ? "met" : "MISSED"}`,
    );
    console.log(`on disk after import: .git ${fmtBytes(gitBytes)}, AFS_HOME ${fmtBytes(afsBytes)}`);
    console.log(`in-process close (store shutdown) median ${fmtMs(median(closeMs))} ms, not included above`);
    emitJson("import-vs-git", {
      files: info.files,
      bytes: info.bytes,
      rounds: ROUNDS,
      git_ms: round(gitMs),
      afs_cli_ms: haveCli ? round(median(viaCli)) : null,
      afs_inprocess_ms: round(median(inProc)),
      afs_inprocess_close_ms: round(median(closeMs)),
      ratio_cli: haveCli ? Math.round((median(viaCli) / gitMs) * 100) / 100 : null,
      ratio_inprocess: Math.round((median(inProc) / gitMs) * 100) / 100,
      git_disk_bytes: gitBytes,
      afs_disk_bytes: afsBytes,
      goal_met: ratio <= 1,
    });
  } finally {
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) await main();
