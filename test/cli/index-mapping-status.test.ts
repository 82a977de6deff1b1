// `afs index status` while the content index builder writes the head trees' maps of contents to
// paths (its last phase): it says the builder is mapping, and how many files it mapped so far.
// The real builder process is paused (SIGSTOP) once its place says it is mapping, so the status
// read then is not a race; through the built CLI.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import { generateTree } from "../../bench/tree-gen.js";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

/** Enough files that mapping them takes a while, and past the map phase's report every 20,000. */
const FILES = 60_000;

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  // The tree and the store on a memory-backed disk when the machine has one (as bench/ puts them),
  // for the test's time; each test file runs in a process of its own (vitest's forks pool).
  if (existsSync("/dev/shm")) process.env.TMPDIR = "/dev/shm";
  afs = await cli();
  // No builder but the one this test starts (an import would start one of its own).
  afs.env.AFS_INDEX_BACKGROUND = "off";
});
afterAll(() => afs.cleanup());

/** The builder's place in the index file: its raw columns. */
function place(home: string): { pid: number; done: number; total: number } | undefined {
  const db = new Database(join(home, "afs.index.db"), { readonly: true, timeout: 5000 });
  try {
    return db.prepare("SELECT pid, done, total FROM text_builder WHERE id = 1").get() as
      | { pid: number; done: number; total: number }
      | undefined;
  } finally {
    db.close();
  }
}

it("says the builder is mapping head trees, with the files mapped so far", { timeout: 120_000 }, async () => {
  const tree = afs.tmp("tree");
  await generateTree(tree, { files: FILES, smallFiles: true });
  afs.ok(["ws", "import", "big", tree]);
  // Every content indexed and the head mapped; then the map dropped, so a builder's work is the map.
  expect(afs.json<{ text: { mapped: number } }>(["index", "build"]).text.mapped).toBe(1);
  const db = new Database(join(afs.home, "afs.index.db"));
  db.exec("DELETE FROM text_tree_files; DELETE FROM text_trees");
  db.close();
  expect(afs.json<{ workspaces: { mapped: boolean }[] }>(["index", "status"]).workspaces[0]?.mapped).toBe(false);

  const builder = spawn(process.execPath, [MAIN, "index", "builder"], {
    env: afs.env,
    stdio: "ignore",
  });
  const exited = once(builder, "exit");
  let seen: { done: number; total: number } | undefined;
  // Polled until the place says "mapping" (a negative total) with some files mapped.
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const p = place(afs.home);
    if (p && p.pid === builder.pid && p.total < 0 && p.done > 0) {
      builder.kill("SIGSTOP");
      seen = place(afs.home);
      break;
    }
    if (builder.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  try {
    expect(seen, "the builder never said it was mapping").toBeDefined();
    const status = afs.ok(["index", "status"]);
    expect(status).toMatch(
      new RegExp(
        `\\ncontent index builder: mapping paths of 1 head tree \\(pid ${builder.pid}\\): ${seen?.done} files mapped, after 0 contents indexed, \\d+ s in all\\n`,
      ),
    );
    const json = afs.json<{ text: { building?: { mapping?: { trees: number; files: number } } } }>(["index", "status"]);
    expect(json.text.building?.mapping).toEqual({ trees: 1, files: seen?.done });
    expect(seen?.done).toBeGreaterThanOrEqual(20_000);
    expect(seen?.done).toBeLessThan(FILES);
  } finally {
    builder.kill("SIGCONT");
    await exited;
  }
  // Done: the head is mapped, and the builder's place is free.
  const after = afs.json<{ workspaces: { mapped: boolean }[]; text: { building?: unknown } }>(["index", "status"]);
  expect(after.workspaces[0]?.mapped).toBe(true);
  expect(after.text.building).toBeUndefined();
});
