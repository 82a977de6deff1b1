// The index builds' walk (workspace/index-walk.ts) meets every content a workspace's head tree and
// its live state hold (the head's whole tree, so its map of contents to paths can be written, then
// the live rows: files, and the trees of directory rows), each shared subtree once; on a real
// SQLite store.
import { afterEach, expect, it } from "vitest";
import { type Hash, sha256 } from "../../src/core/hash.js";
import type { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { count, headRoots, liveContents } from "../../src/workspace/index-walk.js";
import { filesOf } from "../../src/workspace/subtree-files.js";
import { TreeReader } from "../../src/workspace/tree.js";
import type { WorkspaceVolume } from "../../src/workspace/workspace-volume.js";
import { tempAfs } from "../helpers/tmp.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const write = async (afs: Afs, ws: string, path: string, text: string): Promise<void> => {
  await (await afs.workspaces.volume(ws)).writeFile(path, Buffer.from(text), { op: "write" });
};

/** The contents of the workspace's live files, as its volume lists them. */
async function live(afs: Afs, ws: string): Promise<Set<Hash>> {
  const out = new Set<Hash>();
  for await (const s of (await afs.workspaces.volume(ws)).walk("/"))
    if (s.kind === "file" && s.sha256) out.add(s.sha256);
  return out;
}

it("meets the contents of the head trees and of the live rows, directory rows' trees too, each subtree once", async () => {
  const { afs, cleanup } = await tempAfs();
  cleanups.push(cleanup);
  await afs.workspaces.create("a");
  for (const [path, text] of [
    ["/d/x.txt", "x one"],
    ["/d/y.txt", "y"],
    ["/e/z.txt", "z"],
    ["/shared/deep/q.txt", "q"],
  ])
    await write(afs, "a", path as string, text as string);
  await afs.checkpoints.create("a", { name: "one" });
  const store = internalsOf(afs).store;
  const trees = new TreeReader(store, 1000);
  const one = (await headRoots(store, ["a"]))[0]?.root as Hash;
  await write(afs, "a", "/d/x.txt", "x two");
  await afs.checkpoints.create("a", { name: "two" });
  // Live: a replaced file, a deleted one, a new one, and checkpoint one's /d put back at /restored
  // (a directory row whose tree holds "x one", in neither the head nor any file row).
  const volume = (await afs.workspaces.volume("a")) as WorkspaceVolume;
  await write(afs, "a", "/d/y.txt", "y two");
  await volume.remove("/e/z.txt", {});
  await write(afs, "a", "/new.txt", "n");
  const oldD = await trees.lookup(one, ["d"]);
  expect(oldD?.kind).toBe("dir");
  await volume.place("/restored", oldD as NonNullable<typeof oldD>, "restore");
  // A fork shares a's subtrees (its head is a's live state); one change of its own.
  await afs.workspaces.fork("a", "b");
  await write(afs, "b", "/b.txt", "b");

  const roots = await headRoots(store);
  expect(roots.map((r) => r.workspace).sort()).toEqual(["a", "b"]);
  const expected = new Set<Hash>();
  for (const r of roots) {
    const head = [
      ...(await filesOf(trees, "/", { kind: "dir", hash: r.root, size: 0, mode: 0o755, mtime: 0 })).values(),
    ];
    const want = new Set([...head, ...(await live(afs, r.workspace))]);
    const met = new Set<Hash>();
    for await (const f of liveContents(store, trees, [r])) met.add(f.hash);
    expect([...met].sort(), r.workspace).toEqual([...want].sort());
    for (const h of want) expected.add(h);
  }
  // "x one" is live only through the directory row (the head holds "x two"), and was met.
  expect((await live(afs, "a")).has(sha256("x one"))).toBe(true);
  expect(expected.has(sha256("x one"))).toBe(true);
  const counted = await count(liveContents(store, trees, roots));
  expect(counted.blobs).toBe(expected.size);
  // /shared, unchanged in both, is one subtree: its file is met once.
  let met = 0;
  for await (const f of liveContents(store, trees, roots)) if (f.name === "q.txt") met++;
  expect(met).toBe(1);
});
