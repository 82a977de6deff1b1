// `afs index build` (the foreground build: passages, grep's content index, head maps) against the
// import it follows, in time and peak RSS, at two sizes of a generated tree, so what grows with the
// number of files shows; the background builder (`afs index builder`) beside it, on its own copy of
// the imported store. Each command is a fresh CLI process (AFS_DAEMON=off), its peak RSS read by
// test/process/max-rss.mjs. Give another build's CLI with AFS_BENCH_CLI=path/to/dist/cli/main.js
// to compare (for example main's, before a change).
// Run: npm run build && nice node --import tsx bench/index-build.ts [--files N] [--small-files N] [--full]
// (default 200,000 and 100,000 files of 16-256 bytes, both more than a build's batches in flight
// hold; under /dev/shm when it exists; --full: files of ~2 KiB as bench/million.ts makes them).
// The trees and stores are deleted afterwards.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emitJson, printTable, REPO_ROOT } from "./lib.js";
import { ensureTree, removeTree } from "./tree-gen.js";

const MAIN = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const PROBE = join(REPO_ROOT, "test/process/max-rss.mjs");
const BASE = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface Run {
  ms: number;
  rssMb: number;
  stdout: string;
}

/** One afs CLI process over `home`: wall time and peak RSS. */
function afs(home: string, args: string[]): Run {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AFS_HOME: home,
    AFS_ACTOR: "bench",
    AFS_DAEMON: "off",
    AFS_INDEX_BACKGROUND: "off",
  };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE"]) delete env[k];
  const start = performance.now();
  const r = spawnSync(process.execPath, ["--import", PROBE, MAIN, ...args], { env, maxBuffer: 1 << 28 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  const kb = Number(/AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr.toString())?.[1] ?? Number.NaN);
  return { ms, rssMb: kb / 1024, stdout: r.stdout.toString() };
}

interface Figures {
  files: number;
  import: Run;
  build: Run;
  builder: Run;
}

function measure(files: number, full: boolean): Promise<Figures> {
  return (async () => {
    const dir = join(BASE, `afs-index-build-${files}-${process.pid}`);
    const tree = join(dir, "tree");
    try {
      await ensureTree(tree, { files, smallFiles: !full });
      const imported = join(dir, "imported");
      const run = afs(imported, ["ws", "import", "big", tree]);
      // Each build on a copy of the imported home: neither finds the other's work done.
      const homes = ["build", "builder"].map((h) => {
        const home = join(dir, h);
        cpSync(imported, home, { recursive: true });
        return home;
      });
      const build = afs(homes[0] as string, ["index", "build", "--json"]);
      const built = JSON.parse(build.stdout) as { text: { indexed: number; mapped: number } };
      if (built.text.indexed !== files || built.text.mapped !== 1) throw new Error(`unexpected build: ${build.stdout}`);
      const builder = afs(homes[1] as string, ["index", "builder"]);
      return { files, import: run, build, builder };
    } finally {
      removeTree(tree);
      rmSync(dir, { recursive: true, force: true });
    }
  })();
}

const large = Number(arg("--files") ?? 200_000);
const small = Number(arg("--small-files") ?? 100_000);
const full = process.argv.includes("--full");
const figures: Figures[] = [];
for (const n of [small, large]) figures.push(await measure(n, full));
const cell = (r: Run): string => `${(r.ms / 1000).toFixed(1)} s, ${Math.round(r.rssMb)} MB`;
printTable(
  `afs index build vs import (${MAIN})`,
  ["files", "ws import", "index build", "index builder (background's work)"],
  figures.map((f) => [f.files, cell(f.import), cell(f.build), cell(f.builder)]),
);
const [a, b] = figures as [Figures, Figures];
console.log(
  `peak RSS growth from ${a.files} to ${b.files} files: index build ${Math.round(b.build.rssMb - a.build.rssMb)} MB, builder ${Math.round(b.builder.rssMb - a.builder.rssMb)} MB, import ${Math.round(b.import.rssMb - a.import.rssMb)} MB`,
);
emitJson("index-build", {
  cli: MAIN,
  figures: figures.map((f) => ({
    files: f.files,
    import: { ms: Math.round(f.import.ms), rss_mb: Math.round(f.import.rssMb) },
    build: { ms: Math.round(f.build.ms), rss_mb: Math.round(f.build.rssMb) },
    builder: { ms: Math.round(f.builder.ms), rss_mb: Math.round(f.builder.rssMb) },
  })),
});
