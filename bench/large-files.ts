// Large files in bounded memory: peak RSS and time of `afs ws import`, `ws export` and `fsck`
// (each its own CLI process) on a 300 MiB file, a 4 GiB sparse file and a copy of a real tree
// (node_modules), plus the store's size on disk against git's after `git gc` on the same tree.
// The goals: every process under 300 MB RSS; store ≤ 1.5× git after gc.
// Run: npm run build && node --import tsx bench/large-files.ts   (AFS_BENCH_TREE=dir picks the tree)
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { diskBytes, emitJson, fmtBytes, isMain, makeTempDir, printTable, REPO_ROOT, removeDir } from "./lib.js";

const MAIN = join(REPO_ROOT, "dist/cli/main.js");
const PROBE = join(REPO_ROOT, "test/process/max-rss.mjs");
const TREE = process.env.AFS_BENCH_TREE ?? join(REPO_ROOT, "node_modules");
const MiB = 1024 * 1024;

interface Measured {
  ms: number;
  rssKb: number;
}

function afs(home: string, args: string[]): Measured {
  const env: NodeJS.ProcessEnv = { ...process.env, AFS_HOME: home, AFS_ACTOR: "bench" };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE"]) delete env[k];
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ["--import", PROBE, MAIN, ...args], { env, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return { ms, rssKb: Number(/AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr)?.[1] ?? Number.NaN) };
}

function sh(script: string, env: NodeJS.ProcessEnv = process.env): void {
  const r = spawnSync("sh", ["-c", script], { env, encoding: "utf8", maxBuffer: 64 * MiB });
  if (r.status !== 0) throw new Error(`${script} failed (${r.status}): ${r.stderr}`);
}

/** git add -A, commit and gc into a separate GIT_DIR; returns that directory's size. */
async function gitBytes(tree: string, gitDir: string): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_DIR: gitDir,
    GIT_WORK_TREE: tree,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
  };
  sh(
    "git init -q && git add -A && git -c gc.auto=0 -c user.name=b -c user.email=b@b commit -q -m import && git gc -q",
    env,
  );
  return diskBytes(gitDir);
}

interface Row {
  case: string;
  bytes: number;
  import: Measured;
  export: Measured;
  fsck: Measured;
  store_bytes: number;
  git_bytes?: number;
}

async function measure(name: string, tree: string, bytes: number, withGit: boolean): Promise<Row> {
  const work = await makeTempDir("afs-bench-large-");
  try {
    const home = join(work, "home");
    const imported = afs(home, ["ws", "import", "bench", tree]);
    const exported = afs(home, ["ws", "export", "bench", join(work, "out")]);
    const checked = afs(home, ["fsck"]);
    const row: Row = {
      case: name,
      bytes,
      import: imported,
      export: exported,
      fsck: checked,
      store_bytes: await diskBytes(home),
    };
    if (withGit) row.git_bytes = await gitBytes(tree, join(work, "git"));
    return row;
  } finally {
    await removeDir(work);
  }
}

async function main(): Promise<void> {
  const src = await makeTempDir("afs-bench-src-");
  const rows: Row[] = [];
  try {
    const one = join(src, "300mib");
    await mkdir(one);
    const f = await open(join(one, "big.bin"), "w");
    for (let i = 0; i < 300; i++) await f.write(randomBytes(MiB));
    await f.close();
    rows.push(await measure("300 MiB random file", one, 300 * MiB, false));
    await removeDir(one);

    const sparse = join(src, "sparse");
    await mkdir(sparse);
    const s = await open(join(sparse, "big.bin"), "w");
    await s.truncate(4 * 1024 * MiB);
    await s.write(Buffer.from("middle"), 0, 6, 2 * 1024 * MiB);
    await s.close();
    await writeFile(join(sparse, "small.txt"), "hello\n");
    rows.push(await measure("4 GiB sparse file", sparse, 4 * 1024 * MiB, false));
    await removeDir(sparse);

    const tree = join(src, "tree");
    sh(`cp -a '${TREE}' '${tree}'`);
    rows.push(await measure(`copy of ${TREE}`, tree, await diskBytes(tree), true));
  } finally {
    await removeDir(src);
  }
  const mb = (m: Measured) => `${(m.rssKb / 1000).toFixed(0)} MB / ${(m.ms / 1000).toFixed(1)} s`;
  printTable(
    "Large files: peak RSS and wall time per CLI process, store size vs git after gc",
    ["case", "size", "import RSS / time", "export RSS / time", "fsck RSS / time", "store", "git after gc", "store/git"],
    rows.map((r) => [
      r.case,
      fmtBytes(r.bytes),
      mb(r.import),
      mb(r.export),
      mb(r.fsck),
      fmtBytes(r.store_bytes),
      r.git_bytes === undefined ? "-" : fmtBytes(r.git_bytes),
      r.git_bytes === undefined ? "-" : (r.store_bytes / r.git_bytes).toFixed(2),
    ]),
  );
  emitJson("large-files", { rows });
}

if (isMain(import.meta.url)) await main();
