// The files (and symlinks) of a subtree by path → content hash: of a stored tree, or of the live
// state at a snapshot (its base tree with the overlay's rows laid over). How a restore of a
// directory says, file by file, what it changed.
import type { Entry } from "../core/entry.js";
import type { Hash } from "../core/hash.js";
import { isWithin, joinPath } from "../core/paths.js";
import type { Store } from "../store/store.js";
import type { Snapshot } from "./snapshot.js";
import type { TreeReader } from "./tree.js";

/** The files below (or at) `path` of an entry found there: a file is itself, a directory its tree. */
export async function filesOf(trees: TreeReader, path: string, entry: Entry | null): Promise<Map<string, Hash>> {
  const out = new Map<string, Hash>();
  if (!entry) return out;
  if (entry.kind !== "dir") return out.set(path, entry.hash);
  const stack: [string, Hash][] = [[path, entry.hash]];
  while (stack.length > 0) {
    const [dir, hash] = stack.pop() as [string, Hash];
    for (const [name, e] of await trees.get(hash)) {
      const child = joinPath(dir, name);
      if (e.kind === "dir") stack.push([child, e.hash]);
      else out.set(child, e.hash);
    }
  }
  return out;
}

/** The live files at or below `path` as the snapshot sees them. */
export async function liveFilesUnder(
  store: Store,
  trees: TreeReader,
  snap: Snapshot,
  path: string,
): Promise<Map<string, Hash>> {
  const top = await snap.resolve(path);
  const files = await filesOf(trees, path, top);
  if (top?.kind !== "dir") return files;
  // Rows come in path order, so a directory's row is laid down before the rows below it.
  for (const row of await store.overlayUnder(snap.workspace.name, path)) {
    for (const p of [...files.keys()]) if (isWithin(p, row.path)) files.delete(p);
    for (const [p, h] of await filesOf(trees, row.path, row.entry)) files.set(p, h);
  }
  return files;
}
