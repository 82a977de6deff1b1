// The background builder of grep's content index: walks every workspace's files (head trees, then
// live rows) without holding them, and indexes the contents not indexed yet in small batches,
// writing its progress where `afs index status` reads it, then writes each head tree's map of
// contents to paths (streamed from a walk of the tree), so the first search of a head after it
// lists nothing. Resumable: a builder stopped midway leaves what it indexed, and the next one skips
// that (the index is keyed by content hash); a map it left half-written is never used.
import type { Hash } from "../core/hash.js";
import type { Env } from "../core/settings.js";
import { MAX_TREES, type SqliteTextIndex, type TreeFile } from "../store/search/text-index-sqlite.js";
import type { Engine } from "./engine/engine.js";
import { type Rows, RowsWorker } from "./index-rows-worker.js";
import { TreeReader } from "./tree.js";

/**
 * Bytes of contents per indexing call: the builder's memory is this batch, not the tree. Each call
 * writes a segment of posting lists; smaller ones cost more merges.
 */
const BATCH_BYTES = 8 * 1024 * 1024;
const BATCH_FILES = 20_000;
/** Tree entries kept decoded between the counting pass and the indexing pass. */
const TREE_CACHE_ENTRIES = 50_000;
/**
 * Batches sent to one worker thread and not yet written: one it works on and two queued, so it
 * never waits for the main thread; each further worker adds one. Each holds its rows and lists
 * until written, so this bounds the memory.
 */
const WORKER_QUEUE = 3;

export interface BackgroundBuild {
  files: number;
  indexed: number;
  bytes: number;
  /** Workspaces whose head tree's map of contents to paths this build wrote or found written. */
  mapped: number;
  ms: number;
}

interface Root {
  workspace: string;
  root: Hash;
  updated: number;
}

interface FileEntry {
  hash: Hash;
  size: number;
}

/** A batch the worker thread is making rows of: written, in order, once they come. */
interface Sent {
  rows: Promise<Rows>;
  hashes: readonly Hash[];
  /** Files walked when it was sent (the progress it reports once written). */
  files: number;
  /** Its rows have come. */
  ready: boolean;
}

/**
 * Builds the content index for every workspace as process `pid`; null when another live builder
 * holds the place (it is doing this already). Over a SQLite store, a worker thread reads the blobs
 * and makes their rows while this thread writes them (AFS_INDEX_WORKERS=0 in the engine's
 * settings, or `workers: false`, makes them here).
 */
export async function buildContentIndex(
  engine: Pick<Engine, "store" | "search"> & { settings?: { env: Env } },
  pid: number,
  onProgress?: (done: number, total: number, indexed: number) => void,
  stop?: AbortSignal,
  options: { workers?: boolean; batchBytes?: number } = {},
): Promise<BackgroundBuild | null> {
  const index = engine.search.text;
  if (!index.claimBuilder(pid)) return null;
  const start = performance.now();
  const trees = new TreeReader(engine.store, TREE_CACHE_ENTRIES);
  const result: BackgroundBuild = { files: 0, indexed: 0, bytes: 0, mapped: 0, ms: 0 };
  const worker =
    options.workers === false ? null : RowsWorker.open(engine.store, index.maxIndexBytes, engine.settings?.env);
  try {
    const roots = await headRoots(engine.store);
    // A first pass counts the files, so progress has a total; subtrees met twice count once.
    let total = 0;
    for await (const _ of files(trees, roots, new Set())) {
      if (stop?.aborted) return result;
      total++;
    }
    index.reportBuilder(pid, { done: 0, total, indexed: 0 });
    let batch = new Map<Hash, number>();
    let batchBytes = 0;
    const add = (hash: Hash, size: number): boolean => {
      if (!batch.has(hash)) batchBytes += size;
      batch.set(hash, size);
      return batchBytes >= (options.batchBytes ?? BATCH_BYTES) || batch.size >= BATCH_FILES;
    };
    // Batches are written out of order (a worker's after one made here): progress never goes back.
    let reported = 0;
    const progress = (files: number): void => {
      reported = Math.max(reported, files);
      index.reportBuilder(pid, { done: reported, total, indexed: result.indexed });
      onProgress?.(reported, total, result.indexed);
    };
    const buildHere = async (hashes: Iterable<Hash>): Promise<void> => {
      const built = await index.build(hashes, { keep: false, sizes: batch });
      result.indexed += built.indexed;
      result.bytes += built.bytes;
      progress(result.files);
    };
    // With a worker: batches sent and not yet written, oldest first, and the hashes in them (a
    // content met again in a later batch before the first is written is not sent twice).
    const sent: Sent[] = [];
    const sending = new Set<Hash>();
    const writeOldest = async (): Promise<void> => {
      const oldest = sent.shift() as Sent;
      const rows = await oldest.rows;
      const built = index.insertRows(rows.rows, rows.postings);
      worker?.recycle(rows);
      for (const h of oldest.hashes) sending.delete(h);
      result.indexed += built.indexed;
      result.bytes += built.bytes;
      progress(oldest.files);
    };
    const flush = async (last = false): Promise<void> => {
      if (worker) {
        // The new batch goes to the worker before this thread writes what is ready, so the worker
        // is never left idle while the writes run. A full queue frees a place by writing its
        // oldest batch, waiting for it if need be: making rows here as well took this thread from
        // its writes (a third of an idle machine's build, while the worker idled half of it).
        while (sent.length >= WORKER_QUEUE + worker.size - 1) await writeOldest();
        const hashes = index.missing(batch.keys()).filter((h) => !sending.has(h));
        if (hashes.length > 0) {
          const job: Sent = { rows: worker.rows(hashes, batch), hashes, files: result.files, ready: false };
          // Awaited when its turn comes; a failure meanwhile must not count as unhandled.
          job.rows.then(
            () => {
              job.ready = true;
            },
            () => {},
          );
          for (const h of hashes) sending.add(h);
          sent.push(job);
        } else progress(result.files);
        // Then what is ready, leaving the worker the newest batch to work on.
        while (sent.length > 1 && sent[0]?.ready) await writeOldest();
        if (last) while (sent.length > 0) await writeOldest();
      } else await buildHere(batch.keys());
      batch = new Map();
      batchBytes = 0;
      // A SQLite store answers without I/O waits, so the loop would be one chain of microtasks:
      // a turn of the event loop per batch lets a signal (or another request) in.
      await new Promise((resolve) => setImmediate(resolve));
    };
    for await (const f of files(trees, roots, new Set())) {
      // Asked to stop (a signal): what is indexed stays, the next builder goes on from there.
      if (stop?.aborted) return result;
      result.files++;
      if (add(f.hash, f.size)) await flush();
    }
    // Live rows (changes since each head): few, indexed last.
    for (const { workspace } of roots) {
      for (const row of await engine.store.overlayUnder(workspace, "/")) {
        if (row.entry?.kind === "file" && add(row.entry.hash, row.entry.size)) await flush();
      }
    }
    await flush(true);
    // Every head's contents are indexed now: write each head tree's map of contents to paths, so
    // the first search of it answers by lookups (the first to list a 1M-file tree took 21 s, 1 GB).
    result.mapped = await writeMaps(index, trees, roots, stop);
    result.ms = Math.round(performance.now() - start);
    return result;
  } finally {
    // Batches not written yet (stopped, or failed) are dropped: each write is one transaction.
    await worker?.close();
    index.releaseBuilder(pid);
  }
}

/** Every file below the roots, depth first, each distinct subtree walked once (`seen`). */
async function* files(trees: TreeReader, roots: readonly { root: Hash }[], seen: Set<Hash>): AsyncGenerator<FileEntry> {
  const stack: Hash[] = roots.map((r) => r.root);
  while (stack.length > 0) {
    const tree = stack.pop() as Hash;
    if (seen.has(tree)) continue;
    seen.add(tree);
    for (const e of (await trees.get(tree)).values()) {
      if (e.kind === "dir") stack.push(e.hash);
      else if (e.kind === "file") yield { hash: e.hash, size: e.size };
    }
  }
}

/** Each workspace's head tree (of those named; all when none is). */
async function headRoots(store: Engine["store"], names: readonly string[] = []): Promise<Root[]> {
  const roots: Root[] = [];
  for (const ws of await store.listWorkspaces()) {
    if (names.length > 0 && !names.includes(ws.name)) continue;
    const head = await store.getCheckpointById(ws.head);
    if (head) roots.push({ workspace: ws.name, root: head.root, updated: ws.updatedAt });
  }
  return roots;
}

/**
 * After `afs index build`: writes the maps of the named workspaces' head trees (all when none is),
 * as the background builder does once it has indexed them; returns how many heads have one.
 */
export async function mapHeads(engine: Pick<Engine, "store" | "search">, names: readonly string[]): Promise<number> {
  return writeMaps(
    engine.search.text,
    new TreeReader(engine.store, TREE_CACHE_ENTRIES),
    await headRoots(engine.store, names),
  );
}

/** Raised by a walk when the builder is asked to stop, so a map is not completed from part of its tree. */
class Stopped extends Error {}

/**
 * Writes the map of each head tree (the most recently changed workspaces' first, as many as the
 * index keeps) whose contents are all indexed; returns how many of `roots` have one now. Each tree is
 * walked as it is written, in bounded memory.
 */
export async function writeMaps(
  index: SqliteTextIndex,
  trees: TreeReader,
  roots: readonly { root: Hash; updated?: number }[],
  stop?: AbortSignal,
): Promise<number> {
  const newest = [...new Set([...roots].sort((a, b) => (b.updated ?? 0) - (a.updated ?? 0)).map((r) => r.root))];
  const mapped = new Set<Hash>();
  // Oldest first: the index evicts the oldest maps, so the newest head's is written last.
  for (const root of newest.slice(0, MAX_TREES).reverse()) {
    try {
      if (await index.writeTreeMap(root, treeFiles(trees, root, stop))) mapped.add(root);
    } catch (e) {
      if (e instanceof Stopped) break;
      throw e;
    }
  }
  return roots.filter((r) => mapped.has(r.root)).length;
}

/** The files below tree `root` with their paths relative to it, depth first, walked as they are taken. */
async function* treeFiles(trees: TreeReader, root: Hash, stop?: AbortSignal): AsyncGenerator<TreeFile> {
  const stack: { tree: Hash; prefix: string }[] = [{ tree: root, prefix: "" }];
  while (stack.length > 0) {
    if (stop?.aborted) throw new Stopped();
    const { tree, prefix } = stack.pop() as { tree: Hash; prefix: string };
    for (const [name, e] of await trees.get(tree)) {
      if (e.kind === "dir") stack.push({ tree: e.hash, prefix: `${prefix}${name}/` });
      else if (e.kind === "file") yield { path: prefix + name, hash: e.hash };
    }
  }
}
