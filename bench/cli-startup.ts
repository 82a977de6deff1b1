// How fast a fresh `afs` process answers, against a bare `node -e 0` measured in the same run: each
// round runs every command once, in turn, so load drift hits all alike; medians over the rounds.
// Goal (issue 10): `afs fs cat` of a small file ≤ 1.7× `node -e 0`.
// Run: npm run build && node --import tsx bench/cli-startup.ts [ROUNDS]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { emitJson, isMain, makeTempDir, median, printTable, REPO_ROOT, removeDir, round } from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const GOAL = 1.7;

interface Case {
  label: string;
  argv: string[];
}

function run(argv: string[], env: NodeJS.ProcessEnv): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0] as string, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr.toString()}`);
  return ms;
}

export async function main(rounds = 30): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing; run npm run build first`);
  const home = await makeTempDir("afs-bench-startup-");
  const env = { ...process.env, AFS_HOME: home, AFS_ACTOR: "bench" };
  try {
    const afs = (...args: string[]) => [process.execPath, CLI, ...args];
    run(afs("ws", "create", "b"), env);
    run(afs("fs", "write", "/small.txt", "--content", "abc", "-w", "b"), env);
    const cases: Case[] = [
      { label: "node -e 0", argv: [process.execPath, "-e", "0"] },
      { label: "afs fs cat /small.txt", argv: afs("fs", "cat", "/small.txt", "-w", "b") },
      { label: "afs --version", argv: afs("--version") },
      { label: "afs status", argv: afs("status") },
      { label: "afs fs ls /", argv: afs("fs", "ls", "/", "-w", "b") },
      { label: "afs cp list", argv: afs("cp", "list", "-w", "b") },
    ];
    for (const c of cases) run(c.argv, env); // warm the page cache
    const samples = cases.map(() => [] as number[]);
    for (let r = 0; r < rounds; r++) {
      for (const [i, c] of cases.entries()) samples[i]?.push(run(c.argv, env));
    }
    const base = median(samples[0] ?? []);
    const rows = cases.map((c, i) => {
      const m = median(samples[i] ?? []);
      return { command: c.label, median_ms: round(m), ratio: round(m / base) };
    });
    printTable(
      `CLI start-up, median of ${rounds} interleaved rounds (ms; ratio = / node -e 0)`,
      ["command", "median ms", "× node -e 0"],
      rows.map((r) => [r.command, r.median_ms.toFixed(1), `${r.ratio.toFixed(2)}×`]),
    );
    const cat = rows[1]?.ratio ?? Number.NaN;
    console.log(`goal: fs cat ≤ ${GOAL}× node -e 0: ${cat <= GOAL ? "met" : "not met"} (${cat.toFixed(2)}×)`);
    emitJson("cli-startup", { rounds, rows, goal_ratio: GOAL });
  } finally {
    await removeDir(home);
  }
}

if (isMain(import.meta.url)) await main(Number(process.argv[2] ?? 30));
