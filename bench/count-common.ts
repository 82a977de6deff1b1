// `grep -c` of a common literal over a generated tree (issue 22): afs in a new CLI process (cold) and
// in one engine searching again and again (warm, as the resident afs or an MCP server), beside
// `rg --count` in the same run, every answer checked against rg's. --root names another afs
// checkout to measure (its dist/ and src/), so a before/after pair shares one tree and one import.
// Run: npm run build && nice node --import tsx bench/count-common.ts [--files N | --tree DIR --literal WORD] [--work DIR] [--root DIR]
// (--tree: an existing directory, e.g. node_modules, searched for WORD, default "import".)
// (--work keeps the tree and the imported home there for the next run; without it they are removed.)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { emitJson, median, printTable, REPO_ROOT, removeDir, round } from "./lib.js";
import { ensureTree } from "./tree-gen.js";

const RUNS = 3;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const start = performance.now();
  const r = spawnSync(cmd, args, { cwd, env, maxBuffer: 1 << 30 });
  const ms = performance.now() - start;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return { ms, stdout: r.stdout.toString() };
}

const sorted = (out: string): string => out.split("\n").filter(Boolean).sort().join("\n");

async function main(): Promise<void> {
  const files = Number(arg("--files") ?? 50_000);
  const root = resolve(arg("--root") ?? REPO_ROOT);
  const kept = arg("--work");
  const base = existsSync("/dev/shm") ? "/dev/shm" : (await import("node:os")).tmpdir();
  const work = kept ? resolve(kept) : await mkdtemp(join(base, "afs-count-"));
  mkdirSync(work, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AFS_HOME: join(work, arg("--tree") ? `home-${basename(resolve(arg("--tree") as string))}` : `home-${files}`),
    AFS_ACTOR: "bench",
    AFS_DAEMON: "off",
    AFS_INDEX_BACKGROUND: "off",
  };
  for (const k of ["AFS_STORE", "AFS_WORKSPACE", "AFS_TEXT_CACHE_MB"]) delete env[k];
  const cli = join(root, "dist/cli/main.js");
  const afs = (args: string[]) => run(process.execPath, [cli, ...args], work, env);
  try {
    const given = arg("--tree");
    const tree = given ? resolve(given) : join(work, `tree-${files}`);
    const literal = given ? (arg("--literal") ?? "import") : (await ensureTree(tree, { files })).common.literal;
    if (!existsSync(env.AFS_HOME as string)) {
      afs(["ws", "import", "big", tree]);
      afs(["index", "builder"]);
      // The first search records the tree's map of contents (a one-time cost, not measured).
      afs(["fs", "grep", "-l", literal, "--workspace", "big"]);
    }
    const rg = Array.from({ length: RUNS }, () => run("rg", ["-uu", "--count", "-F", literal, "."], tree, env));
    const expected = sorted(rg[0]?.stdout.replace(/^\.\//gm, "/") ?? "");
    const cold = Array.from({ length: RUNS }, () => afs(["fs", "grep", "-c", literal, "--workspace", "big"]));
    let agrees = cold.every((r) => sorted(r.stdout) === expected);

    // Warm: one engine of the measured checkout in this process, searching again and again.
    const { Afs } = (await import(
      pathToFileURL(join(root, "src/workspace/afs.ts")).href
    )) as typeof import("../src/workspace/afs.js");
    const { grep } = (await import(
      pathToFileURL(join(root, "src/ops/index.ts")).href
    )) as typeof import("../src/ops/index.js");
    const engine = await Afs.open({ home: env.AFS_HOME, env, cwd: work });
    const warm: number[] = [];
    try {
      const volume = await engine.workspaces.volume("big");
      const indexes = { text: engine.indexes.text, query: engine.indexes.query };
      for (let i = 0; i < RUNS + 1; i++) {
        const start = performance.now();
        const r = await grep(volume, { pattern: literal, count: true }, { indexes });
        warm.push(performance.now() - start);
        const out = r.mode === "counts" ? r.counts.map((c) => `${c.path}:${c.count}`).join("\n") : "";
        if (sorted(out) !== expected) agrees = false;
      }
    } finally {
      await engine.close();
    }
    const figures = {
      root,
      tree,
      literal,
      matching_files: expected.split("\n").filter(Boolean).length,
      rg_count_ms: round(median(rg.map((r) => r.ms))),
      cold_cli_ms: round(median(cold.map((r) => r.ms))),
      // The first search in the engine fills its cache; the later ones are what warm means.
      warm_first_ms: round(warm[0] as number),
      warm_ms: round(median(warm.slice(1))),
      agrees_with_rg: agrees,
    };
    emitJson("count-common", figures);
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    printTable(
      "grep -c of a common literal: afs cold (new CLI process) and warm (one engine) vs rg --count",
      ["checkout", "tree", "files with it", "rg -c", "afs cold", "afs warm (1st, then median)", "agrees"],
      [
        [
          root,
          tree,
          figures.matching_files,
          s(figures.rg_count_ms),
          s(figures.cold_cli_ms),
          `${s(figures.warm_first_ms)}, ${s(figures.warm_ms)}`,
          String(agrees),
        ],
      ],
    );
  } finally {
    if (!kept) await removeDir(work);
  }
}

await main();
