// `afs ws import` of 200,000 small files through the real CLI keeps its peak RSS flat: compared
// with an import of 20,000 files it grows by far less than the ~1.4 KB per file an import that
// holds the whole walk in memory needs, and stays under 500 MB. The contents are checked by
// listing every file, reading sampled ones back, and a byte-for-byte export of the smaller tree.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateTree } from "../../bench/tree-gen.js";
import { type Cli, cli, ensureBuilt } from "../cli/run.js";
import { measured as measuredRun } from "../helpers/peak-rss.js";

const SMALL = 20_000;
const LARGE = 200_000;
const RSS_LIMIT_KB = 500 * 1024;
/** What the larger import may add over the smaller one: 180,000 files at 1.4 KB each would be ~250 MB. */
const GROWTH_LIMIT_KB = 96 * 1024;
/**
 * What a glob of the larger tree may add over one of the smaller: a walk that held the whole listing
 * (and every tree it read) added ~108 MB; the streamed walk holds the directories along its way.
 */
const GLOB_GROWTH_LIMIT_KB = 48 * 1024;

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});
afterAll(() => afs.cleanup());

/** Runs the CLI with the RSS probe preloaded; returns stdout and the peak RSS in KB. */
const measured = (args: readonly string[]) => measuredRun(afs.env, args);

it(`imports ${LARGE} files in bounded memory, every file in place`, { timeout: 600_000 }, async () => {
  const small = afs.tmp("small");
  const large = afs.tmp("large");
  const smallInfo = await generateTree(small, { files: SMALL, smallFiles: true });
  const info = await generateTree(large, { files: LARGE, smallFiles: true });

  const a = measured(["ws", "import", "small", small]);
  expect(a.stdout).toContain(`imported ${SMALL} files`);
  const b = measured(["ws", "import", "large", large]);
  expect(b.stdout).toContain(`imported ${LARGE} files`);
  console.info(`import peak RSS: ${SMALL} files ${a.maxRssKb} KB, ${LARGE} files ${b.maxRssKb} KB`);
  expect(b.maxRssKb).toBeLessThan(RSS_LIMIT_KB);
  expect(b.maxRssKb - a.maxRssKb).toBeLessThan(GROWTH_LIMIT_KB);

  // A glob over the whole tree streams its walk: memory follows the matches, not the files walked.
  const globs = ["small", "large"].map((w) => measured(["fs", "glob", "*_1234.*", "-w", w]));
  const [smallGlob, largeGlob] = globs as [ReturnType<typeof measured>, ReturnType<typeof measured>];
  console.info(`glob peak RSS: ${SMALL} files ${smallGlob.maxRssKb} KB, ${LARGE} files ${largeGlob.maxRssKb} KB`);
  expect(largeGlob.stdout.split("\n").filter(Boolean).length).toBeGreaterThan(0);
  expect(largeGlob.maxRssKb - smallGlob.maxRssKb).toBeLessThan(GLOB_GROWTH_LIMIT_KB);

  // Every file is in the tree, and sampled ones (each planted literal's first file) read back exactly.
  const listed = afs.ok(["fs", "glob", "*", "-w", "large"]).split("\n").filter(Boolean);
  expect(listed.length).toBe(LARGE);
  for (const { paths } of info.rare) {
    const path = paths[0] as string;
    expect(afs.ok(["fs", "cat", path, "-w", "large"])).toBe(readFileSync(join(large, path), "utf8"));
  }
  expect(afs.ok(["fs", "ls", info.bigDir, "-w", "large"]).split("\n").filter(Boolean).length).toBe(
    info.bigDirFiles + 1,
  );

  // The smaller tree exports byte for byte (every tree and blob the streamed walk wrote).
  const out = afs.tmp("out");
  afs.ok(["ws", "export", "small", out]);
  const diff = spawnSync("diff", ["-r", small, out], { encoding: "utf8" });
  expect(diff.stdout + diff.stderr).toBe("");
  expect(smallInfo.files).toBe(SMALL);
});
