// A tree holding a 4 GiB file (sparse, with bytes at its start, middle and end) imports, exports
// byte-exact and passes fsck through the real CLI, each process peaking under 300 MB RSS.
import { spawnSync } from "node:child_process";
import { open, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN, ROOT } from "../cli/run.js";

const GiB = 1024 ** 3;
const SIZE = 4 * GiB;
const RSS_LIMIT_KB = 300 * 1000;
const PRELOAD = join(ROOT, "test/process/max-rss.mjs");

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});
afterAll(() => afs.cleanup());

/** Runs the CLI with the RSS probe preloaded; returns stdout and the peak RSS in KB. */
function measured(args: readonly string[]): { stdout: string; maxRssKb: number } {
  const r = spawnSync(process.execPath, ["--import", PRELOAD, MAIN, ...args], { env: afs.env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const kb = Number(/AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr)?.[1]);
  expect(kb, `no RSS report from afs ${args.join(" ")}`).toBeGreaterThan(0);
  return { stdout: r.stdout, maxRssKb: kb };
}

it("imports, exports byte-exact and checks a 4 GiB file, each under 300 MB RSS", { timeout: 300_000 }, async () => {
  const src = afs.tmp("src");
  spawnSync("mkdir", ["-p", src]);
  const big = join(src, "big.bin");
  const file = await open(big, "w");
  await file.truncate(SIZE);
  for (const [at, text] of [
    [0, "head"],
    [2 * GiB - 3, "across a chunk boundary"],
    [SIZE - 4, "tail"],
  ] as const) {
    await file.write(Buffer.from(text), 0, text.length, at);
  }
  await file.close();

  const imported = measured(["ws", "import", "big", src]);
  expect(imported.stdout).toMatch(/imported 1 file \(4\.0 GiB\)/);
  const out = afs.tmp("out");
  const exported = measured(["ws", "export", "big", out]);
  const checked = measured(["fsck"]);
  expect(checked.stdout).toMatch(/^ok/);
  console.info(
    `4 GiB file, peak RSS: import ${imported.maxRssKb} KB, export ${exported.maxRssKb} KB, fsck ${checked.maxRssKb} KB`,
  );
  expect((await stat(join(out, "big.bin"))).size).toBe(SIZE);
  expect(spawnSync("cmp", [big, join(out, "big.bin")]).status, "exported file differs").toBe(0);
  for (const kb of [imported.maxRssKb, exported.maxRssKb, checked.maxRssKb]) expect(kb).toBeLessThan(RSS_LIMIT_KB);
});
