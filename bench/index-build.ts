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
import { cpSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afsCli, type CliRun, emitJson, printTable, REPO_ROOT } from "./lib.js";
import { ensureTree, removeTree } from "./tree-gen.js";

const MAIN = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const BASE = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

type Run = CliRun;

/** One afs CLI process over `home`: wall time and peak RSS. */
const afs = (home: string, args: string[]): Run => afsCli(MAIN, home, args);

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
/** Peak RSS in MB (as in the table: 2^20 bytes). */
const mb = (r: Run): number => Math.round(r.rss / 1048576);
const cell = (r: Run): string => `${(r.ms / 1000).toFixed(1)} s, ${mb(r)} MB`;
printTable(
  `afs index build vs import (${MAIN})`,
  ["files", "ws import", "index build", "index builder (background's work)"],
  figures.map((f) => [f.files, cell(f.import), cell(f.build), cell(f.builder)]),
);
const [a, b] = figures as [Figures, Figures];
console.log(
  `peak RSS growth from ${a.files} to ${b.files} files: index build ${Math.round(mb(b.build) - mb(a.build))} MB, builder ${Math.round(mb(b.builder) - mb(a.builder))} MB, import ${Math.round(mb(b.import) - mb(a.import))} MB`,
);
emitJson("index-build", {
  cli: MAIN,
  figures: figures.map((f) => ({
    files: f.files,
    import: { ms: Math.round(f.import.ms), rss_mb: mb(f.import) },
    build: { ms: Math.round(f.build.ms), rss_mb: mb(f.build) },
    builder: { ms: Math.round(f.builder.ms), rss_mb: mb(f.builder) },
  })),
});
