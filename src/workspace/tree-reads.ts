// Reads both volumes make the same way over stored trees: the live state (WorkspaceVolume, trees
// with live rows merged in) and a checkpoint (CheckpointVolume, trees as stored): a blob through the
// engine's cache, a Stat with its symlink target, symlinks followed to the entry they name, and a
// walk streamed depth first.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { baseName, joinPath, normalizePath, parentOf } from "../core/paths.js";
import type { Store } from "../store/store.js";
import { notFound, tooManySymlinks } from "../volume/errors.js";
import type { Stat } from "../volume/volume.js";
import type { BlobCache } from "./blob-cache.js";

const MAX_SYMLINK_HOPS = 16;

/** A blob's bytes, from the engine's cache when it holds them. */
export async function cachedBlob(store: Store, cache: BlobCache, hash: Hash): Promise<Buffer> {
  if (hash === EMPTY_SHA256) return Buffer.alloc(0);
  const cached = cache.get(hash);
  if (cached) return cached;
  const data = await store.getBlob(hash);
  if (!data) throw new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`);
  cache.set(hash, data);
  return data;
}

/** A Stat from a tree entry, without a symlink's target (which needs a read). */
export function plainStat(path: string, name: string, e: Entry): Stat {
  const stat: Stat = { path, name, kind: e.kind, size: e.size, mode: e.mode, mtime: e.mtime };
  if (e.kind !== "dir") stat.sha256 = e.hash;
  return stat;
}

/** A Stat from a tree entry, a symlink's target read from its blob. */
export async function statOf(path: string, e: Entry, blob: (hash: Hash) => Promise<Buffer>): Promise<Stat> {
  const stat = plainStat(path, baseName(path), e);
  if (e.kind === "symlink") stat.target = (await blob(e.hash)).toString("utf8");
  return stat;
}

/** Follows symlinks (within the volume) from `path` to the final existing entry. */
export async function followSymlinks(
  path: string,
  resolve: (path: string) => Promise<Entry | null>,
  blob: (hash: Hash) => Promise<Buffer>,
): Promise<{ path: string; entry: Entry }> {
  let cur = path;
  for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
    const e = await resolve(cur);
    if (!e) throw notFound(cur);
    if (e.kind !== "symlink") return { path: cur, entry: e };
    const target = (await blob(e.hash)).toString("utf8");
    cur = normalizePath(target.startsWith("/") ? target : `${parentOf(cur)}/${target}`);
  }
  throw tooManySymlinks(path);
}

/** A directory's entries and the order to visit them in. */
export interface OpenDir {
  tree: ReadonlyMap<string, Entry>;
  names: Iterable<string>;
}

/**
 * The entries below directory `path` (whose entry is `top`), depth first in name order, down to
 * `maxDepth` levels. Streamed: only the directories along the way are held, so a walk of a million
 * files (a glob, an export) costs no more memory than one of a thousand.
 */
export async function* streamWalk(
  path: string,
  top: Entry,
  maxDepth: number,
  open: (dir: string, entry: Entry) => Promise<OpenDir>,
  blob: (hash: Hash) => Promise<Buffer>,
): AsyncIterable<Stat> {
  const stack: { dir: string; tree: ReadonlyMap<string, Entry>; names: Iterator<string>; depth: number }[] = [];
  const push = async (dir: string, entry: Entry, depth: number): Promise<void> => {
    const { tree, names } = await open(dir, entry);
    stack.push({ dir, tree, names: names[Symbol.iterator](), depth });
  };
  await push(path, top, 1);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as (typeof stack)[number];
    const next = frame.names.next();
    if (next.done) {
      stack.pop();
      continue;
    }
    const e = frame.tree.get(next.value) as Entry;
    const child = joinPath(frame.dir, next.value);
    // Only a symlink needs a read (its target); everything else is the tree entry as is.
    yield e.kind === "symlink" ? await statOf(child, e, blob) : plainStat(child, next.value, e);
    if (e.kind === "dir" && frame.depth < maxDepth) await push(child, e, frame.depth + 1);
  }
}
