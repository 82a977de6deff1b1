// `afs index status` counts the live state of each workspace, and the workspaces together, with a
// content counted once however many files, directories or workspaces hold it: a fork sharing its
// source's trees, the same subtree twice in one tree, a live edit and a deletion since the head, a
// binary file. The figures are those the status holding every file's record gave (it streams now).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { IndexStatus } from "../../src/workspace/search-indexes.js";
import { type Cli, cli, ensureBuilt } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  for (const k of Object.keys(afs.env)) if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete afs.env[k];
});
afterAll(() => afs.cleanup());

/** The JSON of `afs index status --json`: the type the status is made as. */
type Status = IndexStatus;

const ALPHA = "alpha: the first content, twice in one workspace\n";
const ZETA = "zeta notes, in two identical directories\n";
const BETA = "beta, only in the fork\n";
const EDIT = "alpha edited after the head\n";
const BIN = Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 9, 9]);

it("counts files, distinct contents and their bytes per workspace and in total, as the live state has them", () => {
  const tree = afs.tmp("tree");
  for (const dir of ["sub", "sub2"]) mkdirSync(join(tree, dir), { recursive: true });
  writeFileSync(join(tree, "x.txt"), ALPHA);
  writeFileSync(join(tree, "y.txt"), ALPHA);
  writeFileSync(join(tree, "sub/z.md"), ZETA);
  writeFileSync(join(tree, "sub2/z.md"), ZETA);
  writeFileSync(join(tree, "bin.dat"), BIN);
  const env = { AFS_INDEX_BACKGROUND: "off" };
  afs.ok(["ws", "import", "a", tree], { env });
  afs.ok(["ws", "fork", "a", "b"], { env });
  afs.ok(["fs", "write", "/beta.txt", "-w", "b", "--content", BETA], { env });
  afs.json(["index", "build"], {});
  // Live changes since a's head: an edit (its head content is no longer a's) and a deletion.
  afs.ok(["fs", "write", "/x.txt", "-w", "a", "--content", EDIT], { env });
  afs.ok(["fs", "rm", "/sub2/z.md", "-w", "a"], { env });

  const status = afs.json<Status>(["index", "status"]);
  const len = (s: string) => Buffer.byteLength(s);
  // a: x (edited), y (alpha), sub/z (zeta), bin: 4 files, 4 contents; the edit is not chunked yet.
  // The binary is chunked into no passages, so chunked counts it and chunks does not.
  expect(status.workspaces).toEqual([
    {
      name: "a",
      files: 4,
      blobs: 4,
      bytes: len(EDIT) + len(ALPHA) + len(ZETA) + BIN.length,
      chunked: 3,
      chunks: 2,
      mapped: true,
    },
    // b: x, y (alpha), sub/z, sub2/z (zeta), bin, beta.txt: 6 files, 4 contents, all chunked.
    {
      name: "b",
      files: 6,
      blobs: 4,
      bytes: len(ALPHA) + len(ZETA) + BIN.length + len(BETA),
      chunked: 4,
      chunks: 3,
      mapped: true,
    },
  ]);
  // Together: alpha, zeta and the binary once, the edit and beta.
  expect(status.total).toEqual({
    files: 10,
    blobs: 5,
    bytes: len(EDIT) + len(ALPHA) + len(ZETA) + BIN.length + len(BETA),
    chunked: 4,
    chunks: 3,
  });
  expect(afs.json<Status>(["index", "status", "-w", "b"]).total).toEqual({
    ...status.workspaces[1],
    name: undefined,
    mapped: undefined,
  });
});
