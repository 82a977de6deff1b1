// The storage seams under ranked search: chunk records with their keyword index, and vectors.
// Everything stored is derived from content and keyed by hashes, so entries never go stale; only
// `drop`, and `prune` of contents the blob store no longer holds, remove them.
// Implementations: src/store/search/*-sqlite.ts.
import type { Hash } from "../core/hash.js";
import type { ChunkStrategy } from "./chunks.js";
import type { ChunkRef, KeywordHit } from "./query-index.js";
import type { KeywordQuery } from "./tokens.js";

export interface ChunkRecord {
  seq: number;
  start_line: number;
  end_line: number;
  hash: Hash;
  /** The chunk's words, space-separated in order (tokens.ts), for the keyword index. */
  terms: string;
}

export interface ChunkedBlob {
  blob: Hash;
  /** The file name it was chunked under (the extension picks the rules); re-chunking uses it again. */
  name: string;
  chunks: readonly ChunkRecord[];
  skipped?: "binary" | "huge";
}

export interface ChunkStore {
  /** Changes whenever the store is dropped or pruned, so callers know to forget what they cached. */
  generation(): Promise<number>;
  /** Which of `blobs` are chunked with `strategy`. */
  chunked(strategy: ChunkStrategy, blobs: readonly Hash[]): Promise<Set<Hash>>;
  /** Stores blobs' chunks; a blob another writer stored meanwhile is kept as it is. */
  put(strategy: ChunkStrategy, blobs: readonly ChunkedBlob[]): Promise<void>;
  /** Each blob's chunks in order and the name it was chunked under (blobs not chunked are absent). */
  chunksOf(strategy: ChunkStrategy, blobs: readonly Hash[]): Promise<Map<Hash, { name: string; chunks: ChunkRef[] }>>;
  /**
   * Chunks ranked by BM25 over the whole store (not only a scope: callers filter), best first.
   * A chunk qualifies with any term or phrase and without any excluded sequence.
   */
  keyword(strategy: ChunkStrategy, query: KeywordQuery, limit: number): Promise<KeywordHit[]>;
  /** Like keyword, among the chunks of a few blobs only (statistics still over the whole store). */
  keywordWithin(
    strategy: ChunkStrategy,
    query: KeywordQuery,
    blobs: readonly Hash[],
    limit: number,
  ): Promise<KeywordHit[]>;
  /** Counts for `afs index status`. */
  stats(strategy: ChunkStrategy): Promise<{ blobs: number; chunks: number }>;
  /** Forgets every chunk (and the keyword index). */
  drop(): Promise<void>;
  /**
   * Forgets the blobs for which `keep` is false (gc: those the store no longer holds), with their
   * chunks, and changes the generation when it removes any. Returns how many of each went.
   */
  prune(keep: (blob: Hash) => boolean): Promise<{ blobs: number; chunks: number }>;
}

export interface VectorStore {
  /** Vectors from `provider` for the chunk hashes that have one. */
  get(provider: string, chunks: readonly Hash[]): Promise<Map<Hash, Float32Array>>;
  put(provider: string, vectors: ReadonlyArray<{ chunk: Hash; vector: Float32Array }>): Promise<void>;
  count(provider: string): Promise<number>;
  /** Forgets every vector of every provider. */
  drop(): Promise<void>;
  /** Forgets the vectors of chunk hashes no chunk in the chunk store holds any more; returns how many. */
  prune(): Promise<number>;
}
