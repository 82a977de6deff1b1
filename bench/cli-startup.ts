// How fast a fresh `afs` process answers, against a bare `node -e 0` measured in the same run, and
// `afs fs grep` of a rare literal on a real tree (this project's node_modules imported into a
// workspace) against an `rg` process on the same files exported to disk. Each round runs every
// command once, in turn, so load drift hits all alike; medians over the rounds.
// Goals (issue 10): `afs fs cat` of a small file ≤ 1.7× `node -e 0`; `afs fs grep` ≤ 1.5× rg.
// Searches are measured both ways: answered by the resident afs (the default once one runs: a
// fresh `afs` process hands the command over a Unix socket) and by the process itself (AFS_DAEMON=off).
// Run: npm run build && node --import tsx bench/cli-startup.ts [ROUNDS]   (AFS_BENCH_TREE=DIR: another tree;
// AFS_BENCH_BEFORE_CLI=…/dist/cli/main.js of another build: its start-up rows interleaved in the same run)
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { emitJson, isMain, makeTempDir, median, printTable, REPO_ROOT, removeDir, round } from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const BEFORE_CLI = process.env.AFS_BENCH_BEFORE_CLI;
const TREE = process.env.AFS_BENCH_TREE ?? join(REPO_ROOT, "node_modules");
const RARE = "createHash";
const GOALS = { cat: 1.7, grep: 1.5 };
// rg as afs searches: hidden files too, no ignore files (binary files skipped by both).
const RG = ["rg", "--no-config", "--hidden", "--no-ignore", "--no-heading", "--line-number", "--color", "never"];

interface Case {
  label: string;
  argv: string[];
  /** What the ratio divides by: the label of another case. */
  base: string;
  cwd?: string;
  /** Extra environment for this case. */
  env?: NodeJS.ProcessEnv;
}

interface Ran {
  ms: number;
  stdout: string;
}

function run(argv: string[], env: NodeJS.ProcessEnv, cwd?: string, ok = [0]): Ran {
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    env,
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!ok.includes(r.status ?? -1)) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr.toString()}`);
  return { ms, stdout: r.stdout.toString() };
}

const loadavg = (): string => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** "path:line" of every reported line, so afs's and rg's answers can be compared exactly. */
function hits(stdout: string, prefix: string): string[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const m = /^(.*?):(\d+):/.exec(l);
      if (!m) throw new Error(`unexpected grep output: ${l.slice(0, 200)}`);
      return `${(m[1] as string).slice(prefix.length)}:${m[2]}`;
    })
    .sort();
}

export async function main(rounds = 20): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const work = await makeTempDir("afs-bench-startup-");
  const home = join(work, "home");
  // The resident afs's socket in a directory of this run's own, so it is this build's and this run's.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AFS_HOME: home,
    AFS_ACTOR: "bench",
    AFS_RUNTIME_DIR: join(work, "run"),
  };
  for (const key of ["AFS_STORE", "AFS_WORKSPACE", "AFS_DAEMON"]) delete env[key];
  const alone = { AFS_DAEMON: "off" };
  try {
    const afs = (...args: string[]) => [process.execPath, CLI, ...args];
    run(afs("daemon", "stop"), env);
    run(afs("ws", "create", "b"), env);
    run(afs("fs", "write", "/small.txt", "--content", "abc", "-w", "b"), env);

    // The real tree: imported, exported for rg, and searched once so the index is built (a cold
    // process then finds the index on disk, as it would on a user's second search).
    const tree = realpathSync(TREE);
    const exported = join(work, "exported");
    const setup = process.hrtime.bigint();
    run(afs("ws", "import", "tree", tree), env);
    run(afs("ws", "export", "tree", exported), env);
    const grepArgs = ["fs", "grep", RARE, "/", "--workspace", "tree"];
    const first = run(afs(...grepArgs), { ...env, ...alone }, undefined, [0, 1]);
    console.log(
      `tree ${tree}: imported, exported and indexed in ${(Number(process.hrtime.bigint() - setup) / 1e9).toFixed(1)} s (first search ${first.ms.toFixed(0)} ms)`,
    );
    const rgArgv = [...RG, "-F", RARE, "."];
    const afsHits = hits(first.stdout, "");
    const rgHits = hits(run(rgArgv, env, exported, [0, 1]).stdout, ".");
    // A fresh resident afs's first answers (a second apart, as a person or an agent types): the
    // first pays for opening the index and reading blocks, later ones find them in memory.
    run(afs("daemon", "start"), env);
    const firsts: Ran[] = [];
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      firsts.push(run(afs(...grepArgs), env, undefined, [0, 1]));
    }
    console.log(`a fresh resident afs's first answers: ${firsts.map((r) => `${r.ms.toFixed(0)} ms`).join(", ")}`);
    const residentHits = hits((firsts[0] as Ran).stdout, "");
    const equal = (a: string[]): boolean => a.length === rgHits.length && a.every((h, i) => h === rgHits[i]);
    const same = equal(afsHits) && equal(residentHits);
    console.log(
      `rare literal ${RARE}: afs ${afsHits.length} lines (resident: ${residentHits.length}), rg ${rgHits.length} lines, ${same ? "identical" : "DIFFERENT"}`,
    );

    const startup: [string, string[]][] = [
      ["afs --version", ["--version"]],
      ["afs fs cat /small.txt", ["fs", "cat", "/small.txt", "-w", "b"]],
      ["afs status", ["status"]],
      ["afs cp list", ["cp", "list", "-w", "b"]],
    ];
    const cases: Case[] = [
      { label: "node -e 0", argv: [process.execPath, "-e", "0"], base: "node -e 0" },
      ...startup.flatMap(([label, args]): Case[] => [
        { label, argv: afs(...args), base: "node -e 0" },
        ...(BEFORE_CLI
          ? [{ label: `(before) ${label}`, argv: [process.execPath, BEFORE_CLI, ...args], base: "node -e 0" }]
          : []),
      ]),
      { label: "afs fs ls / (resident)", argv: afs("fs", "ls", "/", "-w", "b"), base: "node -e 0" },
      { label: "afs fs ls / (no resident)", argv: afs("fs", "ls", "/", "-w", "b"), base: "node -e 0", env: alone },
      { label: `rg -F ${RARE} (export)`, argv: rgArgv, base: `rg -F ${RARE} (export)`, cwd: exported },
      { label: `afs fs grep ${RARE} (resident)`, argv: afs(...grepArgs), base: `rg -F ${RARE} (export)` },
      {
        label: `afs fs grep ${RARE} (no resident)`,
        argv: afs(...grepArgs),
        base: `rg -F ${RARE} (export)`,
        env: alone,
      },
    ];
    const envOf = (c: Case): NodeJS.ProcessEnv => ({ ...env, ...c.env });
    for (const c of cases) run(c.argv, envOf(c), c.cwd, [0, 1]); // warm the page cache
    const loadBefore = loadavg();
    const samples = cases.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (const [i, c] of cases.entries()) samples[i]?.push(run(c.argv, envOf(c), c.cwd, [0, 1]).ms);
    }
    const loadAfter = loadavg();
    const medians = new Map(cases.map((c, i) => [c.label, median(samples[i] ?? [])]));
    const rows = cases.map((c) => {
      const m = medians.get(c.label) ?? Number.NaN;
      return {
        command: c.label,
        median_ms: round(m),
        per: c.base,
        ratio: round(m / (medians.get(c.base) ?? Number.NaN)),
      };
    });
    printTable(
      `CLI start-up, median of ${rounds} interleaved rounds (ms; load average ${loadBefore} before, ${loadAfter} after)`,
      ["command", "median ms", "ratio", "to"],
      rows.map((r) => [r.command, r.median_ms.toFixed(1), `${r.ratio.toFixed(2)}×`, r.per]),
    );
    const ratio = (label: string): number => rows.find((r) => r.command === label)?.ratio ?? Number.NaN;
    const cat = ratio("afs fs cat /small.txt");
    const grep = ratio(`afs fs grep ${RARE} (resident)`);
    const alonePerRg = ratio(`afs fs grep ${RARE} (no resident)`);
    const verdict = (value: number, goal: number): string =>
      `${value <= goal ? "met" : "not met"} (${value.toFixed(2)}×)`;
    console.log(`goal: fs cat ≤ ${GOALS.cat}× node -e 0: ${verdict(cat, GOALS.cat)}`);
    console.log(
      `goal: fs grep ≤ ${GOALS.grep}× rg: ${verdict(grep, GOALS.grep)} (without a resident afs: ${alonePerRg.toFixed(2)}×)`,
    );
    emitJson("cli-startup", {
      rounds,
      rows,
      goals: GOALS,
      tree,
      before_cli: BEFORE_CLI ?? null,
      grep_identical: same,
      grep_lines: afsHits.length,
      fresh_resident_ms: firsts.map((r) => round(r.ms)),
      loadavg: { before: loadBefore, after: loadAfter },
    });
  } finally {
    spawnSync(process.execPath, [CLI, "daemon", "stop"], {
      env: { ...process.env, AFS_RUNTIME_DIR: join(work, "run") },
    });
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) await main(Number(process.argv[2] ?? 20));
