// The builder of grep's content index: walks the workspaces' files (index-walk.ts: head trees, then
// live rows) without holding them, and indexes the contents not indexed yet in small batches,
// writing its progress where `afs index status` reads it, then writes each head tree's map of
// contents to paths (streamed from a walk of the tree), so the first search of a head after it
// lists nothing. The background builder runs it over every workspace; `afs index build` over those
// it is given. Resumable: a builder stopped midway leaves what it indexed, and the next one skips
// that (the index is keyed by content hash); a map it left half-written is never used.
import type { Hash } from "../core/hash.js";
import type { Env } from "../core/settings.js";
import type { BuilderProgress } from "../search/text-index.js";
import { MAX_TREES, type SqliteTextIndex, type TreeFile } from "../store/search/text-index-sqlite.js";
import type { Engine } from "./engine/engine.js";
import { type Rows, RowsWorker } from "./index-rows-worker.js";
import { type Batch, batches, headRoots, liveContents, type Root } from "./index-walk.js";
import { TreeReader } from "./tree.js";

/**
 * Bytes of contents per indexing call: the builder's memory is this batch, not the tree. Each call
 * writes a segment of posting lists; smaller ones cost more merges.
 */
const BATCH_BYTES = 8 * 1024 * 1024;
const BATCH_FILES = 20_000;
/**
 * Tree entries a build's TreeReader keeps decoded. Its walks read each tree once and keep none
 * (`keep: false`): a cache smaller than the tree misses on every tree of a second walk anyway, and
 * the decoded trees it held and dropped were old-generation garbage that grew the heap with the
 * number of files (a walk of 400,000 files peaked at 203 MB against 113 MB keeping none).
 */
export const TREE_CACHE_ENTRIES = 50_000;
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

/** A batch the worker thread is making rows of: written, in order, once they come. */
interface Sent {
  rows: Promise<Rows>;
  hashes: readonly Hash[];
  /** Files walked when it was sent (the progress it reports once written). */
  files: number;
  /** Its rows have come. */
  ready: boolean;
}

/** What an index build reads and writes, and with what settings. */
export type BuilderEngine = Pick<Engine, "store" | "search"> & { settings?: { env: Env } };

/**
 * Builds the content index for every workspace as process `pid`; null when another live builder
 * holds the place (it is doing this already). Over a SQLite store, a worker thread reads the blobs
 * and makes their rows while this thread writes them (AFS_INDEX_WORKERS=0 in the engine's
 * settings, or `workers: false`, makes them here).
 */
export async function buildContentIndex(
  engine: BuilderEngine,
  pid: number,
  onProgress?: (done: number, total: number, indexed: number) => void,
  stop?: AbortSignal,
  options: { workers?: boolean; batchBytes?: number } = {},
): Promise<BackgroundBuild | null> {
  const index = engine.search.text;
  if (!index.claimBuilder(pid)) return null;
  const start = performance.now();
  try {
    const trees = new TreeReader(engine.store, TREE_CACHE_ENTRIES);
    const roots = await headRoots(engine.store);
    // A first pass counts the files, so progress has a total.
    let total = 0;
    for await (const _ of liveContents(engine.store, trees, roots, stop)) total++;
    const result: BackgroundBuild = { files: 0, indexed: 0, bytes: 0, mapped: 0, ms: 0 };
    if (stop?.aborted) return result;
    Object.assign(result, await indexContents(engine, trees, roots, { ...options, pid, total, onProgress, stop }));
    if (stop?.aborted) return result;
    // Every head's contents are indexed now: write each head tree's map of contents to paths, so
    // the first search of it answers by lookups (the first to list a 1M-file tree took 21 s, 1 GB).
    result.mapped = await writeMaps(index, trees, roots, { stop, pid, indexed: result.indexed });
    result.ms = Math.round(performance.now() - start);
    return result;
  } finally {
    index.releaseBuilder(pid);
  }
}

/**
 * `afs index build`'s content index: the contents of the named workspaces (all when none is), then
 * their head trees' maps, as the background builder builds them. `total` is the files the walk
 * meets (counted before). As process `pid` it takes the builder's place when it is free, so
 * `afs index status` shows its progress and no background builder starts beside it; when a builder
 * holds the place, this builds beside it (each content is written once, whoever comes first).
 */
export async function buildContentIndexOf(
  engine: BuilderEngine,
  names: readonly string[],
  options: { pid: number; total: number; onProgress?: (done: number, total: number) => void },
): Promise<{ indexed: number; bytes: number; mapped: number }> {
  const index = engine.search.text;
  const claimed = index.claimBuilder(options.pid);
  const pid = claimed ? options.pid : undefined;
  try {
    const trees = new TreeReader(engine.store, TREE_CACHE_ENTRIES);
    const roots = await headRoots(engine.store, names);
    const built = await indexContents(engine, trees, roots, {
      pid,
      total: options.total,
      onProgress: options.onProgress,
    });
    return { ...built, mapped: await writeMaps(index, trees, roots, { pid, indexed: built.indexed }) };
  } finally {
    if (claimed) index.releaseBuilder(options.pid);
  }
}

export interface IndexOptions {
  /** The files the walk will meet (progress's total). */
  total: number;
  /** The builder's place this process holds: its progress is written there for `afs index status`. */
  pid?: number | undefined;
  onProgress?: ((done: number, total: number, indexed: number) => void) | undefined;
  stop?: AbortSignal | undefined;
  workers?: boolean | undefined;
  batchBytes?: number | undefined;
}

/**
 * Indexes the contents of the roots' workspaces (liveContents) not indexed yet, in batches of
 * bounded size: a build's memory is its batches in flight, whatever the number of files.
 */
export async function indexContents(
  engine: BuilderEngine,
  trees: TreeReader,
  roots: readonly Root[],
  options: IndexOptions,
): Promise<{ files: number; indexed: number; bytes: number }> {
  const index = engine.search.text;
  const { pid, total, stop } = options;
  const result = { files: 0, indexed: 0, bytes: 0 };
  const worker =
    options.workers === false ? null : RowsWorker.open(engine.store, index.maxIndexBytes, engine.settings?.env);
  try {
    if (pid !== undefined) index.reportBuilder(pid, { done: 0, total, indexed: 0 });
    // Batches are written out of order (a worker's after one made here): progress never goes back.
    let reported = 0;
    const progress = (files: number): void => {
      reported = Math.max(reported, files);
      if (pid !== undefined) index.reportBuilder(pid, { done: reported, total, indexed: result.indexed });
      options.onProgress?.(reported, total, result.indexed);
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
    const flush = async (batch: Batch): Promise<void> => {
      const sizes = new Map<Hash, number>();
      for (const [h, f] of batch.files) sizes.set(h, f.size);
      if (worker) {
        // The new batch goes to the worker before this thread writes what is ready, so the worker
        // is never left idle while the writes run. A full queue frees a place by writing its
        // oldest batch, waiting for it if need be: making rows here as well took this thread from
        // its writes (a third of an idle machine's build, while the worker idled half of it).
        while (sent.length >= WORKER_QUEUE + worker.size - 1) await writeOldest();
        const hashes = index.missing(sizes.keys()).filter((h) => !sending.has(h));
        if (hashes.length > 0) {
          const job: Sent = { rows: worker.rows(hashes, sizes), hashes, files: batch.walked, ready: false };
          // Awaited when its turn comes; a failure meanwhile must not count as unhandled.
          job.rows.then(
            () => {
              job.ready = true;
            },
            () => {},
          );
          for (const h of hashes) sending.add(h);
          sent.push(job);
        } else progress(batch.walked);
        // Then what is ready, leaving the worker the newest batch to work on.
        while (sent.length > 1 && sent[0]?.ready) await writeOldest();
      } else {
        const built = await index.build(sizes.keys(), { keep: false, sizes });
        result.indexed += built.indexed;
        result.bytes += built.bytes;
        progress(batch.walked);
      }
      // A SQLite store answers without I/O waits, so the loop would be one chain of microtasks:
      // a turn of the event loop per batch lets a signal (or another request) in.
      await new Promise((resolve) => setImmediate(resolve));
    };
    const limits = { bytes: options.batchBytes ?? BATCH_BYTES, files: BATCH_FILES };
    for await (const batch of batches(liveContents(engine.store, trees, roots, stop), limits)) {
      // Asked to stop (a signal): what is indexed stays, the next builder goes on from there.
      if (stop?.aborted) return result;
      result.files = batch.walked;
      await flush(batch);
    }
    // The rows still coming, written once the walk is done.
    while (sent.length > 0) await writeOldest();
    return result;
  } finally {
    // Batches not written yet (stopped, or failed) are dropped: each write is one transaction.
    await worker?.close();
  }
}

/** Raised by a walk when the builder is asked to stop, so a map is not completed from part of its tree. */
class Stopped extends Error {}

/** Files mapped between two reports of the map phase's progress. */
const MAP_REPORT_FILES = 20_000;

/**
 * Writes the map of each head tree (the most recently changed workspaces' first, as many as the
 * index keeps) whose contents are all indexed; returns how many of `roots` have one now. Each tree is
 * walked as it is written, in bounded memory. With `pid`, the builder's place holder, its progress
 * is written where `afs index status` reads it: the place's columns (done, total, indexed) were
 * made for the indexing phase, and this phase needs no column of its own (no schema change for a
 * phase): a negative total, -(head trees to map), says it is mapping, `done` counts the files
 * mapped so far, and `indexed` keeps the indexing phase's figure (read back by withPhase).
 */
export async function writeMaps(
  index: SqliteTextIndex,
  trees: TreeReader,
  roots: readonly { root: Hash; updated?: number }[],
  options: { stop?: AbortSignal | undefined; pid?: number | undefined; indexed?: number } = {},
): Promise<number> {
  const { stop, pid } = options;
  const newest = [...new Set([...roots].sort((a, b) => (b.updated ?? 0) - (a.updated ?? 0)).map((r) => r.root))];
  const chosen = newest.slice(0, MAX_TREES).reverse();
  const mapped = new Set<Hash>();
  let files = 0;
  const report = (): void => {
    if (pid !== undefined)
      index.reportBuilder(pid, { done: files, total: -chosen.length, indexed: options.indexed ?? 0 });
  };
  report();
  // Oldest first: the index evicts the oldest maps, so the newest head's is written last.
  for (const root of chosen) {
    try {
      const walk = treeFiles(trees, root, stop, () => {
        if (++files % MAP_REPORT_FILES === 0) report();
      });
      if (await index.writeTreeMap(root, walk)) mapped.add(root);
    } catch (e) {
      if (e instanceof Stopped) break;
      throw e;
    }
  }
  return roots.filter((r) => mapped.has(r.root)).length;
}

/** The files below tree `root` with their paths relative to it, depth first, walked as they are taken. */
async function* treeFiles(
  trees: TreeReader,
  root: Hash,
  stop?: AbortSignal,
  onFile?: () => void,
): AsyncGenerator<TreeFile> {
  const stack: { tree: Hash; prefix: string }[] = [{ tree: root, prefix: "" }];
  while (stack.length > 0) {
    if (stop?.aborted) throw new Stopped();
    const { tree, prefix } = stack.pop() as { tree: Hash; prefix: string };
    for (const [name, e] of await trees.get(tree, { keep: false })) {
      if (e.kind === "dir") stack.push({ tree: e.hash, prefix: `${prefix}${name}/` });
      else if (e.kind === "file") {
        onFile?.();
        yield { path: prefix + name, hash: e.hash };
      }
    }
  }
}

/**
 * A builder's progress as `afs index status` shows it: the map phase's figures (written in the
 * indexing phase's columns, see writeMaps) as `mapping`, the files walked being all of them.
 */
export function withPhase(progress: BuilderProgress): BuilderProgress {
  if (progress.total >= 0) return progress;
  return { ...progress, mapping: { trees: -progress.total, files: progress.done }, done: 0, total: 0 };
}
