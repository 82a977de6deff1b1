// The storage seams under ranked search: passage records with their keyword index, and vectors.
// Everything stored is derived from content and keyed by hashes, so entries never go stale; only
// `drop`, and `prune` of contents the blob store no longer holds, remove them.
// Implementations: src/store/search/*-sqlite.ts.
import type { Hash } from "../core/hash.js";
import type { PassageStrategy } from "./passages.js";
import type { KeywordHit, PassageRef } from "./query-index.js";
import type { KeywordQuery } from "./words.js";

export interface PassageRecord {
  seq: number;
  start_line: number;
  end_line: number;
  hash: Hash;
  /** The passage's words, space-separated in order (words.ts), for the keyword index. */
  terms: string;
}

export interface BlobPassages {
  blob: Hash;
  /** The file name it was split under (the extension picks the rules); re-splitting uses it again. */
  name: string;
  passages: readonly PassageRecord[];
  skipped?: "binary" | "huge";
}

export interface PassageStore {
  /** Changes whenever the store is dropped or pruned, so callers know to forget what they cached. */
  generation(): Promise<number>;
  /** Which of `blobs` are split with `strategy`. */
  indexed(strategy: PassageStrategy, blobs: readonly Hash[]): Promise<Set<Hash>>;
  /** Stores blobs' passages; a blob another writer stored meanwhile is kept as it is. */
  put(strategy: PassageStrategy, blobs: readonly BlobPassages[]): Promise<void>;
  /** Each blob's passages in order and the name it was split under (blobs not split are absent). */
  passagesOf(
    strategy: PassageStrategy,
    blobs: readonly Hash[],
  ): Promise<Map<Hash, { name: string; passages: PassageRef[] }>>;
  /**
   * Passages ranked by BM25 over the whole store (not only a scope: callers filter), best first.
   * A passage qualifies with any term or phrase and without any excluded sequence.
   */
  keyword(strategy: PassageStrategy, query: KeywordQuery, limit: number): Promise<KeywordHit[]>;
  /** Like keyword, among the passages of a few blobs only (statistics still over the whole store). */
  keywordWithin(
    strategy: PassageStrategy,
    query: KeywordQuery,
    blobs: readonly Hash[],
    limit: number,
  ): Promise<KeywordHit[]>;
  /** Counts for `afs index status`. */
  stats(strategy: PassageStrategy): Promise<{ blobs: number; chunks: number }>;
  /** Forgets every passage (and the keyword index). */
  drop(): Promise<void>;
  /**
   * Forgets the blobs for which `keep` is false (gc: those the store no longer holds), with their
   * passages, and changes the generation when it removes any. Returns how many of each went.
   */
  prune(keep: (blob: Hash) => boolean): Promise<{ blobs: number; chunks: number }>;
}

export interface VectorStore {
  /** Vectors from `provider` for the passage hashes that have one. */
  get(provider: string, passages: readonly Hash[]): Promise<Map<Hash, Float32Array>>;
  put(provider: string, vectors: ReadonlyArray<{ passage: Hash; vector: Float32Array }>): Promise<void>;
  count(provider: string): Promise<number>;
  /** Forgets every vector of every provider. */
  drop(): Promise<void>;
  /** Forgets the vectors of passage hashes no passage in the passage store holds any more; returns how many. */
  prune(): Promise<number>;
}
