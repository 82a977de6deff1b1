// A CLI process with test/process/max-rss.mjs preloaded, so a test reads its peak RSS: what the
// bounded-memory tests compare between a smaller and a larger tree.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { MAIN, ROOT } from "../cli/run.js";

const PRELOAD = join(ROOT, "test/process/max-rss.mjs");

/** Runs `afs …args` under `env`; its stdout, peak RSS in KB and wall time in ms. Fails on a non-zero exit. */
export function measured(
  env: NodeJS.ProcessEnv,
  args: readonly string[],
): { stdout: string; maxRssKb: number; ms: number } {
  const start = performance.now();
  const r = spawnSync(process.execPath, ["--import", PRELOAD, MAIN, ...args], {
    env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const kb = Number(/AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr)?.[1]);
  expect(kb, `no RSS report from afs ${args.join(" ")}`).toBeGreaterThan(0);
  return { stdout: r.stdout, maxRssKb: kb, ms: Math.round(performance.now() - start) };
}
