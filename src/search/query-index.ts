// What ranked search (file_query) needs from an index, whatever keeps it: passages of the files in
// scope, keyword (BM25) ranking over them, an embedding provider and nearest-neighbour ranking.
// A workspace's index persists, keyed by content hash; a plain directory's lives for one query.
import type { Hash } from "../core/hash.js";
import type { EmbeddingProvider } from "./embeddings/provider.js";
import type { PassageStrategy } from "./passages.js";
import type { KeywordQuery } from "./words.js";

/** A file a search covers. `hash` is its content hash when the volume knows it without reading. */
export interface ScopeFile {
  path: string;
  size: number;
  hash?: Hash;
}

/** A file ready to search: its path and content hash (the key of its passages). */
export interface IndexedFile {
  path: string;
  hash: Hash;
}

/** Where a passage is in its blob. Content-derived, so the same for every file holding the blob. */
export interface PassageRef {
  blob: Hash;
  seq: number;
  start_line: number;
  end_line: number;
  /** SHA-256 of the passage's document text (headings + lines): the key of its vectors. */
  hash: Hash;
}

export interface KeywordHit {
  passage: PassageRef;
  /** BM25, higher is better. */
  score: number;
}

export interface VectorHit {
  passage: PassageRef;
  /** Cosine similarity with the query vector. */
  similarity: number;
}

/** The configured embedding provider, or null and a sentence saying how to configure one. */
export type Embedder = { provider: EmbeddingProvider; message?: undefined } | { provider: null; message: string };

export type Progress = (done: number, total: number) => void;

export interface QueryIndex {
  /**
   * Makes sure every file in scope is split with `strategy` (splitting those that are not yet)
   * and returns them with their content hashes. Files that vanished meanwhile are left out.
   */
  prepare(files: readonly ScopeFile[], strategy: PassageStrategy, onProgress?: Progress): Promise<IndexedFile[]>;
  /** Passages of the blobs in `scope` ranked by BM25, best first, at most `limit`. */
  keyword(
    query: KeywordQuery,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<KeywordHit[]>;
  /** The embedding provider semantic search uses, if one is configured. */
  embedder(): Promise<Embedder>;
  /**
   * Embeds the passages of the blobs in `scope` that have no vector yet from `provider` (at most
   * `max` of them); returns how many still lack one.
   */
  embed(
    provider: EmbeddingProvider,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    options?: { max?: number; onProgress?: Progress },
  ): Promise<{ missing: number }>;
  /** Passages of the blobs in `scope` nearest to `vector` by cosine similarity, at most `limit`. */
  nearest(
    provider: EmbeddingProvider,
    vector: Float32Array,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<VectorHit[]>;
  /** A blob's text (for snippets), or null when it is gone or binary. */
  text(file: IndexedFile): Promise<string | null>;
}
