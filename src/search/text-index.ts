// The content index grep uses to pick candidate files: blobs keyed by content hash, each indexed
// once by the trigrams of its text, asked which blobs may contain some required literals.
// The store-specific implementation lives under src/store/search/.
import type { Hash } from "../core/hash.js";

/**
 * What a matching text must contain: literals (each `folded` with foldText, at least 3 units,
 * matched without regard to ASCII case) combined with AND / OR. `all` requires nothing.
 */
export type LiteralQuery =
  | { op: "all" }
  | { op: "lit"; folded: string }
  | { op: "and"; of: LiteralQuery[] }
  | { op: "or"; of: LiteralQuery[] };

export interface TextIndexBuild {
  /** Blobs indexed by this call (already indexed ones are not counted). */
  indexed: number;
  /** Bytes of the blobs indexed by this call. */
  bytes: number;
  /** Of those, blobs recorded as binary or too large to index (never retried). */
  skipped: number;
}

export interface TextIndexStatus {
  /** Text blobs indexed. */
  texts: number;
  /** Blobs recorded as binary (never candidates: grep skips binary files). */
  binary: number;
  /** Blobs too large to index (always candidates, so they are scanned). */
  large: number;
  /** Bytes of all blobs recorded. */
  bytes: number;
  /** The background builder at work, when one is (its process alive). */
  building?: BuilderProgress;
}

/** A background builder's progress, as it last wrote it (times in ms since the epoch). */
export interface BuilderProgress {
  pid: number;
  started: number;
  updated: number;
  /** Files walked so far, of `total` (every workspace's; 0 while it is still counting them). */
  done: number;
  total: number;
  /** Contents it indexed so far. */
  indexed: number;
  /**
   * Set once every content is indexed and the builder writes the head trees' maps of contents to
   * paths: how many trees it maps, and the files of them mapped so far.
   */
  mapping?: { trees: number; files: number };
}

/** A run of adjacent blocks of a text, read alone: its bytes as a latin1 view (see TextIndex.view). */
export interface BlockRun {
  /** Byte offset of the run in the text (a line start). */
  start: number;
  /** Number of the line that starts at `start`. */
  line: number;
  view: string;
}

export type BuildProgress = (done: number, total: number) => void;

export interface BuildOptions {
  onProgress?: BuildProgress;
  /**
   * Keep what was indexed in memory (the texts for the search about to read them, the rows by
   * hash). Default true; a background builder passes false, so its memory stays bounded.
   */
  keep?: boolean;
  /** Sizes already known (from tree entries), so the store is not asked for them. */
  sizes?: ReadonlyMap<Hash, number>;
}

export interface TextIndex {
  /** Indexes every blob among `hashes` that is not indexed yet. */
  build(hashes: Iterable<Hash>, options?: BuildOptions): Promise<TextIndexBuild>;
  /**
   * The blobs among `hashes` whose text may satisfy `query`: a superset of those that do
   * (verify before reporting), never missing one, each with the blocks (text-blocks.ts) that may
   * hold a matching line, or null for all of them. Indexes any blob not indexed yet first, unless
   * there are too many (a tree just imported, which a background builder indexes): those are then
   * candidates, every block of them, to be scanned.
   */
  candidates(hashes: readonly Hash[], query: LiteralQuery): Promise<Map<Hash, readonly number[] | null>>;
  /**
   * Candidates within one stored tree (Volume.storedBase) by its recorded map of contents to paths
   * (recordTree): the candidate contents as `candidates` answers, with the paths (relative to the
   * tree, no leading "/") that hold them, found by index lookups alone, not by listing the tree.
   * Null when the tree is not recorded, the query requires nothing, or it names so many texts that
   * walking the tree is as good.
   */
  treeCandidates?(
    tree: Hash,
    query: LiteralQuery,
  ): Promise<{ candidates: Map<Hash, readonly number[] | null>; files: { path: string; hash: Hash }[] } | null>;
  /**
   * Records a stored tree's files (paths relative to it, with their content hashes) for
   * treeCandidates, when every content among them is indexed; otherwise, or when it is already
   * recorded, does nothing.
   */
  recordTree?(tree: Hash, files: readonly { path: string; hash: Hash }[]): Promise<void>;
  /** Whether treeCandidates has a map of `tree` now. */
  hasTreeMap?(tree: Hash): boolean;
  /**
   * A search begins: the texts it reads are kept over those of earlier searches, but a search whose
   * texts outweigh the cache does not evict its own (see TextCache.nextPass).
   */
  beginSearch?(): void;
  /** A blob's text (decoded UTF-8), or null for binary content. */
  text(hash: Hash): Promise<string | null>;
  /**
   * An indexed text blob's UTF-8 bytes as a latin1 string (one unit per byte, so searching it needs
   * no decode), kept in a bounded cache; null when the blob is not an indexed text (binary, too large).
   */
  view(hash: Hash): Promise<string | null>;
  /**
   * Only these blocks of an indexed text, read without the rest, each run of adjacent ones with the
   * number of its first line; null when reading the whole view is as good (it is cached, or small,
   * or asked for again by another search, which then keeps it) or the index cannot say.
   */
  runs(hash: Hash, blocks: readonly number[]): Promise<BlockRun[] | null>;
  /**
   * For each indexed text among `hashes` that the index reads whole (the small ones: most files),
   * the number of its lines that hold `literal` (count-lines.ts: `countable`, no line end in it), at
   * most `max`; the others are left out, for the caller to search as usual. How grep -c and -l of
   * a plain literal read thousands of files: in batches, no text decoded or split into lines.
   */
  countLines?(hashes: readonly Hash[], literal: string, max: number): Promise<Map<Hash, number>>;
  status(): Promise<TextIndexStatus>;
  /** Forgets everything indexed (for a rebuild); the next search or build indexes afresh. */
  clear(): Promise<void>;
  /** Forgets the blobs for which `keep` is false (gc: those the store no longer holds); returns how many. */
  prune(keep: (hash: Hash) => boolean): Promise<number>;
}
