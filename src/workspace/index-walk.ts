// The walk every index build takes over the workspaces' contents (the background builder's and
// `afs index build`'s): the files of the head trees, each distinct subtree once, then the live
// changes since each head, streamed and cut into batches, so no build holds a file per file walked.
import type { Hash } from "../core/hash.js";
import { HashCounter } from "../core/hash-counter.js";
import type { Store } from "../store/store.js";
import type { TreeReader } from "./tree.js";

/** A file met by the walk: its name (not its path: the walk keeps none) and content. */
export interface WalkedFile {
  name: string;
  hash: Hash;
  size: number;
}

/** A workspace's head tree. */
export interface Root {
  workspace: string;
  root: Hash;
  updated: number;
}

/** Each workspace's head tree (of those named; all when none is). */
export async function headRoots(store: Store, names: readonly string[] = []): Promise<Root[]> {
  const roots: Root[] = [];
  for (const ws of await store.listWorkspaces()) {
    if (names.length > 0 && !names.includes(ws.name)) continue;
    const head = await store.getCheckpointById(ws.head);
    if (head) roots.push({ workspace: ws.name, root: head.root, updated: ws.updatedAt });
  }
  return roots;
}

/**
 * The files of the roots' workspaces, depth first: every file below the head trees (a subtree met
 * twice, as forks share them, is walked once), then each workspace's live rows (few: the changes
 * since its head), a directory row's tree walked as the heads are. A file replaced or deleted since
 * its head is met with its head's content too, on purpose: the head tree's map of contents to paths
 * (which a search reads, with the live rows over it) is written only once every content of the
 * head is indexed (a walk of the live state alone kept edited heads from being mapped).
 */
export async function* liveContents(
  store: Store,
  trees: TreeReader,
  roots: readonly Root[],
  stop?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  const seen = new Set<Hash>();
  yield* below(
    trees,
    roots.map((r) => r.root),
    seen,
    stop,
  );
  for (const { workspace } of roots) {
    for (const row of await store.overlayUnder(workspace, "/")) {
      if (stop?.aborted) return;
      const e = row.entry;
      if (e?.kind === "file") yield { name: row.path.slice(row.path.lastIndexOf("/") + 1), hash: e.hash, size: e.size };
      else if (e?.kind === "dir") yield* below(trees, [e.hash], seen, stop);
    }
  }
}

/** Every file below the trees, depth first, each distinct subtree walked once (`seen`). */
async function* below(
  trees: TreeReader,
  roots: readonly Hash[],
  seen: Set<Hash>,
  stop?: AbortSignal,
): AsyncGenerator<WalkedFile> {
  const stack: Hash[] = [...roots];
  while (stack.length > 0) {
    if (stop?.aborted) return;
    const tree = stack.pop() as Hash;
    if (seen.has(tree)) continue;
    seen.add(tree);
    for (const [name, e] of await trees.get(tree, { keep: false })) {
      if (e.kind === "dir") stack.push(e.hash);
      else if (e.kind === "file") yield { name, hash: e.hash, size: e.size };
    }
  }
}

/** A batch of distinct contents (the first file met with each), and how many files were walked when it was cut. */
export interface Batch {
  files: Map<Hash, WalkedFile>;
  bytes: number;
  walked: number;
}

/**
 * Cuts a walk into batches of distinct contents of at most `bytes` bytes or `files` files (a content
 * met again in a later batch is in that one too: whoever takes the batches skips what is done).
 * The last batch may be empty, so a consumer always hears the final number walked.
 */
export async function* batches(
  walk: AsyncIterable<WalkedFile>,
  limits: { bytes: number; files: number },
): AsyncGenerator<Batch> {
  let batch: Batch = { files: new Map(), bytes: 0, walked: 0 };
  let walked = 0;
  for await (const f of walk) {
    walked++;
    if (batch.files.has(f.hash)) continue;
    batch.files.set(f.hash, f);
    batch.bytes += f.size;
    if (batch.bytes >= limits.bytes || batch.files.size >= limits.files) {
      batch.walked = walked;
      yield batch;
      batch = { files: new Map(), bytes: 0, walked: 0 };
    }
  }
  batch.walked = walked;
  yield batch;
}

/** What a walk met: files, distinct contents and their bytes. */
export interface Counted {
  files: number;
  blobs: number;
  bytes: number;
}

/**
 * Counts a walk's files and distinct contents. The contents are told apart by a 64-bit prefix of
 * their hashes in a flat table (~16 bytes a content, against ~100 for a set of hash strings); two
 * contents sharing one would count once, a chance of 1 in ~10^7 at 10^6 contents.
 */
export async function count(walk: AsyncIterable<WalkedFile>): Promise<Counted> {
  const distinct = new HashCounter();
  const out: Counted = { files: 0, blobs: 0, bytes: 0 };
  for await (const f of walk) {
    out.files++;
    if (distinct.add(f.hash)) {
      out.blobs++;
      out.bytes += f.size;
    }
  }
  return out;
}
