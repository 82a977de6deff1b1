// Driving the search indexes for `afs index`: what they hold against what the workspaces hold,
// and building what is missing (query passages, grep's content index, and on request vectors).
// Both indexes are keyed by content hash, so each distinct blob is indexed once for all workspaces.
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { HashCounter } from "../core/hash-counter.js";
import type { PassageStrategy } from "../search/passages.js";
import type { Progress } from "../search/query-index.js";
import type { TextIndexStatus } from "../search/text-index.js";
import type { Volume } from "../volume/volume.js";
import type { SearchFiles } from "./engine/search-files.js";
import { type BuilderEngine, buildContentIndexOf, TREE_CACHE_ENTRIES, withPhase } from "./index-builder.js";
import { batches, count, headRoots, liveContents } from "./index-walk.js";
import { TreeReader } from "./tree.js";

/** The strategy `afs index` builds: the default of file_query. */
const STRATEGY: PassageStrategy = "auto";

export interface WorkspaceCoverage {
  name: string;
  files: number;
  /** Distinct contents among the files. */
  blobs: number;
  bytes: number;
  /** Of the blobs, those split into passages. */
  chunked: number;
  chunks: number;
  /** Passages with a vector from the configured provider (absent without one). */
  vectors?: number;
  /**
   * Whether grep's content index holds the map of contents to paths of the workspace's head tree:
   * a new process's search then finds its candidates' paths by lookups, not by listing the tree.
   */
  mapped?: boolean;
}

export interface IndexStatus {
  index_file: string;
  index_bytes: number;
  /** The embedding provider's id, or null with why semantic search is off. */
  provider: string | null;
  provider_note?: string;
  workspaces: WorkspaceCoverage[];
  /** The workspaces together (a blob several hold counts once). */
  total: Omit<WorkspaceCoverage, "name">;
  /** The whole index, including contents no workspace holds any more. */
  stored: { blobs: number; chunks: number; vectors?: number };
  text: TextIndexStatus;
}

export interface BuildOptions {
  embeddings?: boolean;
  /** Drop the passage index and grep's content index first (with `embeddings`, the vectors too). */
  rebuild?: boolean;
  /** Chunks and text: files walked of the files counted; vectors: passages embedded of those missing. */
  onProgress?: (stage: "chunks" | "text" | "vectors", done: number, total: number) => void;
}

export interface BuildResult {
  workspaces: string[];
  /**
   * Distinct contents of the workspaces' head trees and live files, and their bytes (a file
   * changed since its head counts its head's content too: that is indexed for the head's map).
   */
  blobs: number;
  bytes: number;
  chunks: { ms: number; blobs_added: number };
  /** `mapped`: head trees with a map of contents to paths (grep answers their first search by lookups). */
  text: { ms: number; indexed: number; bytes: number; mapped?: number };
  vectors?: { ms: number; provider: string; embedded: number };
}

/** What indexing reads: the workspaces' live files and the home's search files. */
export interface IndexSource {
  workspaces: { list(): Promise<{ name: string }[]>; volume(name: string): Promise<Volume> };
  search: SearchFiles;
}

/** Distinct contents per coverage call: the status holds one batch's passages at a time. */
const STATUS_BATCH = 2_000;

/** Counts of a workspace, or of all together, as they add up. */
type Tally = Omit<WorkspaceCoverage, "name" | "mapped">;

function tally(provider: boolean): Tally {
  return { files: 0, blobs: 0, bytes: 0, chunked: 0, chunks: 0, ...(provider ? { vectors: 0 } : {}) };
}

function addCoverage(t: Tally, c: { chunks: number; vectors: number }): void {
  t.chunked++;
  t.chunks += c.chunks;
  if (t.vectors !== undefined) t.vectors += c.vectors;
}
/** grep's content index, with a builder's map phase told apart (see withPhase). */
async function textStatus(afs: IndexSource): Promise<TextIndexStatus> {
  const status = await afs.search.text.status();
  if (status.building) status.building = withPhase(status.building);
  return status;
}

/**
 * What the indexes hold of the named workspaces' live files (all workspaces when none is named),
 * each workspace streamed (its volume's walk, the live state: an edited file counts its new content
 * only, a deleted one nothing), so nothing is held per file: distinct contents are told apart by
 * HashCounters (one per workspace, one for all together), and those new to a workspace are asked
 * of the passage index a batch at a time, a content new to all workspaces counting in the total
 * (holding every file's record, a status of 200,000 small files peaked at 397 MB; streamed, 173 MB).
 */
export async function indexStatus(afs: IndexSource, names: readonly string[] = []): Promise<IndexStatus> {
  const index = afs.search.query;
  const embedder = await index.embedder();
  const provider = embedder.provider ?? undefined;
  const chosen = names.length > 0 ? names : (await afs.workspaces.list()).map((w) => w.name);
  const total = tally(provider !== undefined);
  const inTotal = new HashCounter();
  const workspaces: WorkspaceCoverage[] = [];
  for (const name of chosen) {
    const volume = await afs.workspaces.volume(name);
    const ws = tally(provider !== undefined);
    const inWorkspace = new HashCounter();
    // Contents new to the workspace, each with whether it is new to the total too.
    let batch = new Map<Hash, boolean>();
    const flush = async (): Promise<void> => {
      if (batch.size === 0) return;
      const covered = await index.coverage(STRATEGY, [...batch.keys()], provider);
      for (const [hash, newInTotal] of batch) {
        const c = covered.get(hash);
        if (!c) continue;
        addCoverage(ws, c);
        if (newInTotal) addCoverage(total, c);
      }
      batch = new Map();
    };
    for await (const s of volume.walk("/")) {
      if (s.kind !== "file" || !s.sha256) continue;
      ws.files++;
      total.files++;
      if (!inWorkspace.add(s.sha256)) continue;
      ws.blobs++;
      ws.bytes += s.size;
      const newInTotal = inTotal.add(s.sha256);
      if (newInTotal) {
        total.blobs++;
        total.bytes += s.size;
      }
      batch.set(s.sha256, newInTotal);
      if (batch.size >= STATUS_BATCH) await flush();
    }
    await flush();
    const head = await volume.storedBase?.("/");
    workspaces.push({ name, ...ws, mapped: head ? afs.search.text.hasTreeMap(head.tree) : false });
  }
  return {
    index_file: afs.search.db.path,
    index_bytes: afs.search.db.bytes(),
    provider: provider?.id ?? null,
    ...(embedder.provider ? {} : { provider_note: embedder.message }),
    workspaces,
    total,
    stored: await index.stats(STRATEGY, provider?.id),
    text: await textStatus(afs),
  };
}

/** What `afs index build` reads and writes: the workspaces, the store behind them and the index file. */
export type BuildSource = IndexSource & BuilderEngine & { workspaces: { get(name: string): Promise<unknown> } };

/** Files per call splitting contents into passages: a call's memory is its batch, not the tree. */
const CHUNK_BATCH = { files: 2_000, bytes: 8 * 1024 * 1024 };

/**
 * Builds the indexes over the named workspaces' files (all when none is), each stage a streamed
 * walk of them (index-walk.ts), as the background builder walks them: nothing is held per file, so
 * memory stays bounded at any size (a build holding every file's record peaked at 262 MB at
 * 100,000 small files and 450 MB at 200,000; streamed, 292 and 305 MB, most of it the worker
 * thread's batches). Progress is in files walked of the files counted first. The vectors stage
 * alone, asked for with `embeddings`, gathers its scope's hashes (the passage index embeds a scope
 * at once).
 */
export async function buildIndexes(
  afs: BuildSource,
  names: readonly string[],
  options: BuildOptions = {},
): Promise<BuildResult> {
  const index = afs.search.query;
  const embedder = options.embeddings ? await index.embedder() : undefined;
  if (embedder && !embedder.provider) {
    throw new AfsError("INVALID_ARGUMENT", `--embeddings needs an embedding provider: ${embedder.message}`);
  }
  // An unknown name fails here, as it would anywhere else (the walk would skip it).
  for (const name of names) await afs.workspaces.get(name);
  const roots = await headRoots(afs.store, names);
  const trees = new TreeReader(afs.store, TREE_CACHE_ENTRIES);
  const walk = () => liveContents(afs.store, trees, roots);
  const counted = await count(walk());
  const progress = (stage: "chunks" | "text" | "vectors"): Progress | undefined =>
    options.onProgress ? (done, total) => options.onProgress?.(stage, done, total) : undefined;
  if (options.rebuild) {
    await index.drop({ vectors: options.embeddings === true });
    await afs.search.text.clear();
  }

  const before = (await index.stats(STRATEGY)).blobs;
  let start = performance.now();
  const chunked = progress("chunks");
  for await (const batch of batches(walk(), CHUNK_BATCH)) {
    const files = [...batch.files.values()].map((f) => ({ path: f.name, hash: f.hash, size: f.size }));
    await index.prepare(files, STRATEGY, undefined, { keep: false });
    chunked?.(batch.walked, counted.files);
  }
  const chunks = {
    ms: Math.round(performance.now() - start),
    blobs_added: (await index.stats(STRATEGY)).blobs - before,
  };

  start = performance.now();
  const built = await buildContentIndexOf(afs, names, {
    pid: process.pid,
    total: counted.files,
    onProgress: progress("text"),
  });
  const text = {
    ms: Math.round(performance.now() - start),
    indexed: built.indexed,
    bytes: built.bytes,
    mapped: built.mapped,
  };

  const result: BuildResult = {
    workspaces: roots.map((r) => r.workspace),
    blobs: counted.blobs,
    bytes: counted.bytes,
    chunks,
    text,
  };
  if (embedder?.provider) {
    const p = embedder.provider;
    start = performance.now();
    const scope = new Set<Hash>();
    for await (const f of walk()) scope.add(f.hash);
    const before = (await index.stats(STRATEGY, p.id)).vectors ?? 0;
    await index.embed(p, STRATEGY, scope, { onProgress: progress("vectors") });
    const after = (await index.stats(STRATEGY, p.id)).vectors ?? 0;
    result.vectors = { ms: Math.round(performance.now() - start), provider: p.id, embedded: after - before };
  }
  return result;
}
