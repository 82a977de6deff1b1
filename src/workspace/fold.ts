// Folding the live overlay into new trees: only directories on changed paths are rewritten, so a
// checkpoint costs O(changes × depth) whatever the workspace's size.
import type { Entry } from "../core/entry.js";
import type { Hash } from "../core/hash.js";
import { segments } from "../core/paths.js";
import type { OverlayRow } from "../store/store.js";
import type { TreeReader, TreeWriter } from "./tree.js";

interface Node {
  /** undefined: no row here (only changes below); null: deleted; Entry: replaced. */
  row?: Entry | null;
  children: Map<string, Node>;
}

function trieOf(rows: readonly OverlayRow[]): Node {
  const root: Node = { children: new Map() };
  for (const { path, entry } of rows) {
    let node = root;
    for (const seg of segments(path)) {
      let next = node.children.get(seg);
      if (!next) {
        next = { children: new Map() };
        node.children.set(seg, next);
      }
      node = next;
    }
    node.row = entry;
  }
  return root;
}

/** Returns the root tree of `base` with `rows` applied; new trees go to `writer`. */
export async function fold(
  base: Hash,
  rows: readonly OverlayRow[],
  trees: TreeReader,
  writer: TreeWriter,
): Promise<Hash> {
  if (rows.length === 0) return base;
  return foldDir(base, trieOf(rows), trees, writer);
}

async function foldDir(base: Hash, node: Node, trees: TreeReader, writer: TreeWriter): Promise<Hash> {
  const entries = new Map(await trees.get(base));
  for (const [name, child] of node.children) {
    if (child.row === null) {
      entries.delete(name);
      continue;
    }
    // A row replaces the entry; a directory row brings its own base tree for the rows below it.
    const current = child.row ?? entries.get(name);
    if (!current) continue;
    if (current.kind !== "dir" || child.children.size === 0) {
      entries.set(name, current);
      continue;
    }
    entries.set(name, { ...current, hash: await foldDir(current.hash, child, trees, writer) });
  }
  return writer.add(entries);
}
