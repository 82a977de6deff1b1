// `afs index build` of 200,000 small files through the real CLI keeps its peak RSS flat: it streams
// the workspaces' files stage by stage (as the background builder does), so against a build of
// 100,000 files it grows by far less than the ~1.4 KB per file a build holding every file's record
// needed. Then grep answers from the index (its head tree mapped) exactly what the tree holds, and
// `afs index status` of the same trees counts every file, its memory as flat as the build's.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateTree, type TreeInfo } from "../../bench/tree-gen.js";
import { type Cli, cli, ensureBuilt } from "../cli/run.js";
import { measured as measuredRun } from "../helpers/peak-rss.js";

const SMALL = 100_000;
const LARGE = 200_000;
const RSS_LIMIT_KB = 500 * 1024;
/**
 * What the larger build may add over the smaller: a build holding every file's record added
 * ~140 MB for these 100,000 more files; the streamed one ~20–50 MB (the walk's garbage, collected
 * later in a longer run).
 */
const GROWTH_LIMIT_KB = 96 * 1024;
/**
 * What `afs index status` of the larger tree may add over the smaller: holding every live file's
 * record (and a set of all hashes) it added ~156 MB for these 100,000 more files (237 MB -> 397 MB);
 * streamed, ~4 MB (169 MB -> 173 MB).
 */
const STATUS_GROWTH_LIMIT_KB = 48 * 1024;
const SHM = "/dev/shm";

const homes: Cli[] = [];
beforeAll(() => {
  ensureBuilt();
  // The trees and the stores on a memory-backed disk when the machine has one (as bench/ puts
  // them): the test is about memory, and writing 300,000 files to a slow disk would double its time.
  // Each test file runs in a process of its own (vitest's forks pool), so only this one sees it.
  if (existsSync(SHM)) process.env.TMPDIR = SHM;
});
afterAll(async () => {
  for (const h of homes) await h.cleanup();
});

interface Built {
  workspaces: string[];
  blobs: number;
  chunks: { blobs_added: number };
  text: { indexed: number; mapped: number };
}

/**
 * Runs the CLI with the RSS probe preloaded. One worker thread: a second adds ±30 MB between runs
 * (the batches it has in flight), which is noise beside the growth measured here, not growth.
 */
const measured = (afs: Cli, args: readonly string[]) =>
  measuredRun({ ...afs.env, AFS_DAEMON: "off", AFS_INDEX_BACKGROUND: "off", AFS_INDEX_WORKERS: "1" }, args);

/** A home with the generated tree imported as workspace "big", and its index built; the build's figures. */
async function built(files: number): Promise<{ afs: Cli; info: TreeInfo; build: Built; maxRssKb: number }> {
  const afs = await cli();
  homes.push(afs);
  const tree = afs.tmp("tree");
  const info = await generateTree(tree, { files, smallFiles: true });
  afs.ok(["ws", "import", "big", tree], { env: { AFS_INDEX_BACKGROUND: "off" } });
  const r = measured(afs, ["index", "build", "--json"]);
  return { afs, info, build: JSON.parse(r.stdout) as Built, maxRssKb: r.maxRssKb };
}

/** The homes the build test made, for the status test after it. */
const trees: { small?: Awaited<ReturnType<typeof built>>; large?: Awaited<ReturnType<typeof built>> } = {};

it(`builds the index of ${LARGE} files in bounded memory, and grep answers from it`, { timeout: 300_000 }, async () => {
  const small = await built(SMALL);
  const large = await built(LARGE);
  Object.assign(trees, { small, large });
  console.info(`index build peak RSS: ${SMALL} files ${small.maxRssKb} KB, ${LARGE} files ${large.maxRssKb} KB`);
  for (const [{ build }, files] of [
    [small, SMALL],
    [large, LARGE],
  ] as const) {
    // Every file of the tree is distinct: each is chunked and indexed once, and the head is mapped.
    expect(build).toMatchObject({
      workspaces: ["big"],
      blobs: files,
      chunks: { blobs_added: files },
      text: { indexed: files, mapped: 1 },
    });
  }
  expect(large.maxRssKb).toBeLessThan(RSS_LIMIT_KB);
  expect(large.maxRssKb - small.maxRssKb).toBeLessThan(GROWTH_LIMIT_KB);

  // grep answers from the index (every content indexed, the head mapped): exactly the files the
  // generator planted each literal in, case-sensitively and not.
  const { afs, info } = large;
  const status = afs.json<{ workspaces: { mapped?: boolean }[]; text: { texts: number; building?: unknown } }>([
    "index",
    "status",
  ]);
  expect(status.text).toMatchObject({ texts: LARGE });
  expect(status.text.building).toBeUndefined();
  expect(status.workspaces[0]?.mapped).toBe(true);
  for (const { literal, paths } of info.rare) {
    const found = (flags: string[]) =>
      afs
        .ok(["fs", "grep", ...flags, literal, "--workspace", "big"])
        .split("\n")
        .filter(Boolean)
        .sort();
    expect(found(["-l"]), literal).toEqual(paths);
    expect(found(["-l", "-i"]), literal).toEqual(paths);
  }
});

interface Status {
  workspaces: { name: string; files: number; blobs: number; chunked: number; chunks: number; mapped: boolean }[];
  total: { files: number; blobs: number; bytes: number; chunked: number; chunks: number };
}

it(`afs index status counts ${LARGE} files in bounded memory`, { timeout: 120_000 }, () => {
  const { small, large } = trees;
  if (!small || !large) throw new Error("the build test above made no homes");
  const figures = [small, large].map(({ afs }) => measured(afs, ["index", "status", "--json"]));
  const [s, l] = figures as [ReturnType<typeof measured>, ReturnType<typeof measured>];
  console.info(
    `index status peak RSS: ${SMALL} files ${s.maxRssKb} KB in ${s.ms} ms, ${LARGE} files ${l.maxRssKb} KB in ${l.ms} ms`,
  );
  for (const [{ stdout }, files] of [
    [s, SMALL],
    [l, LARGE],
  ] as const) {
    // Every file distinct, and chunked by the build (one passage each: they are small).
    const status = JSON.parse(stdout) as Status;
    expect(status.workspaces).toMatchObject([{ name: "big", files, blobs: files, chunked: files, mapped: true }]);
    expect(status.total).toMatchObject({ files, blobs: files, chunked: files });
    expect(status.total.chunks).toBeGreaterThanOrEqual(files);
  }
  expect(l.maxRssKb - s.maxRssKb).toBeLessThan(STATUS_GROWTH_LIMIT_KB);
});
