// Garbage collection and integrity checking over everything reachable from checkpoints and
// live overlays. A grace period keeps objects a concurrent writer stored but has not yet committed.
import { createHash } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { sha256 } from "../core/hash.js";
import type { RepackResult } from "../store/repack.js";
import type { Store } from "../store/store.js";
import { EMPTY_TREE, type TreeReader } from "./tree.js";
import { retainedVersions } from "./versioning.js";

export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;

interface Reachable {
  trees: Set<Hash>;
  blobs: Set<Hash>;
  missingTrees: Set<Hash>;
}

async function markReachable(store: Store, trees: TreeReader): Promise<Reachable> {
  const roots = await store.gcRoots();
  const seen: Reachable = { trees: new Set(), blobs: new Set(roots.blobs), missingTrees: new Set() };
  const stack = [...roots.trees];
  while (stack.length > 0) {
    const hash = stack.pop() as Hash;
    if (seen.trees.has(hash)) continue;
    seen.trees.add(hash);
    let tree: Awaited<ReturnType<TreeReader["get"]>>;
    try {
      tree = await trees.get(hash);
    } catch {
      seen.missingTrees.add(hash);
      continue;
    }
    for (const entry of tree.values()) {
      if (entry.kind === "dir") stack.push(entry.hash);
      else seen.blobs.add(entry.hash);
    }
  }
  return seen;
}

/** Rows the search indexes dropped because the store no longer holds their blobs. */
export interface IndexPruned {
  /** grep's content index: blobs (with their trigrams). */
  text_blobs: number;
  /** The query index: chunked blobs, their chunks, and vectors no remaining chunk needs. */
  query_blobs: number;
  chunks: number;
  vectors: number;
}

export interface GcResult {
  blobs_deleted: number;
  trees_deleted: number;
  bytes_freed: number;
  blobs_kept: number;
  trees_kept: number;
  /** Chunks of large contents no remaining blob uses, and their stored bytes. */
  chunks_deleted: number;
  chunk_bytes_freed: number;
  /**
   * Old versions kept readable by the workspaces' versioning policies (blobs nothing else
   * references), their bytes, and per workspace how many versions its policy names.
   */
  versions_kept: number;
  version_bytes_kept: number;
  versions_by_workspace: Record<string, number>;
  /** Absent when there is no index file (gc does not create one). */
  index_pruned?: IndexPruned;
  /** Values re-encoded in today's format; present only when gc was asked to repack. */
  repacked?: RepackResult;
}

/**
 * Deletes unreachable objects older than the grace period, then lets `pruneIndex` drop derived
 * rows of the blobs it deleted. Passing what was deleted (not what was kept) leaves alone a blob
 * stored and indexed while gc ran, so a concurrent search never loses it.
 */
export async function collectGarbage(
  store: Store,
  trees: TreeReader,
  graceMs = DEFAULT_GC_GRACE_MS,
  pruneIndex?: (deleted: ReadonlySet<Hash>) => Promise<IndexPruned | undefined>,
): Promise<GcResult> {
  const now = Date.now();
  const cutoff = now - graceMs;
  const live = await markReachable(store, trees);
  const history = await retainedVersions(store, now);
  const result: GcResult = {
    blobs_deleted: 0,
    trees_deleted: 0,
    bytes_freed: 0,
    blobs_kept: 0,
    trees_kept: 0,
    chunks_deleted: 0,
    chunk_bytes_freed: 0,
    versions_kept: 0,
    version_bytes_kept: 0,
    versions_by_workspace: history.byWorkspace,
  };
  const goneBlobs = new Set<Hash>();
  for (const kind of ["blob", "tree"] as const) {
    const keep = kind === "blob" ? live.blobs : live.trees;
    const doomed: Hash[] = [];
    for await (const obj of store.listObjects(kind)) {
      // The empty tree is shared by every new directory and always kept (Afs.open stores it).
      if (keep.has(obj.hash) || obj.createdAt > cutoff || obj.hash === EMPTY_TREE) {
        result[kind === "blob" ? "blobs_kept" : "trees_kept"]++;
        continue;
      }
      if (kind === "blob" && history.blobs.has(obj.hash)) {
        result.blobs_kept++;
        result.versions_kept++;
        result.version_bytes_kept += obj.size;
        continue;
      }
      doomed.push(obj.hash);
      result.bytes_freed += obj.size;
    }
    const deleted = await store.deleteObjects(kind, doomed);
    if (kind === "blob") for (const hash of doomed) goneBlobs.add(hash);
    result[kind === "blob" ? "blobs_deleted" : "trees_deleted"] = deleted;
  }
  const swept = await store.sweepChunks(cutoff);
  result.chunks_deleted = swept.deleted;
  result.chunk_bytes_freed = swept.bytes;
  const pruned = await pruneIndex?.(goneBlobs);
  if (pruned) result.index_pruned = pruned;
  return result;
}

export interface FsckResult {
  ok: boolean;
  problems: string[];
  trees_checked: number;
  blobs_checked: number;
}

/** Verifies the store, that every reachable object exists, and that every blob matches its hash. */
export async function checkStore(store: Store, trees: TreeReader): Promise<FsckResult> {
  const problems = await store.checkIntegrity();
  const live = await markReachable(store, trees);
  for (const h of live.missingTrees) problems.push(`tree ${h} is referenced but missing`);
  for (const h of live.blobs) {
    const problem = await checkBlob(store, h);
    if (problem) problems.push(problem);
  }
  for (const h of live.trees) {
    if (h === EMPTY_TREE || live.missingTrees.has(h)) continue;
    const data = await store.getTree(h);
    if (data && sha256(data) !== h) problems.push(`tree ${h} does not match its content hash`);
  }
  return { ok: problems.length === 0, problems, trees_checked: live.trees.size, blobs_checked: live.blobs.size };
}

/** Streams a blob through SHA-256 (a chunk in memory at a time); returns what is wrong, if anything. */
async function checkBlob(store: Store, hash: Hash): Promise<string | null> {
  const h = createHash("sha256");
  try {
    for await (const piece of store.blobStream(hash)) h.update(piece);
  } catch (e) {
    if (e instanceof AfsError && e.code === "NOT_FOUND") return `blob ${hash} is referenced but missing`;
    // A missing chunk is named (checkIntegrity reports it too); bytes that no longer decode are damage.
    if (e instanceof AfsError && e.details.chunk !== undefined) return `blob ${hash} cannot be read: ${e.message}`;
    if (e instanceof AfsError && e.code === "IO_ERROR") return `blob ${hash} does not match its content hash`;
    throw e;
  }
  return h.digest("hex") === hash ? null : `blob ${hash} does not match its content hash`;
}
