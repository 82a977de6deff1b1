// The persistent query index of an afs home: chunks, BM25 and vectors keyed by content hash, so a
// blob is chunked once for every workspace and checkpoint that holds it and an edit re-chunks only
// the new blob. Work happens lazily (blobs in scope not yet chunked are chunked when a query needs
// them) or up front (`afs index build`). Storage is behind ChunkStore and VectorStore.
import { type Hash, sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { chunkRecords, embedText } from "./chunk-records.js";
import { type ChunkStrategy, chunkFile, MAX_FILE_BYTES } from "./chunks.js";
import { dot, type EmbeddingProvider } from "./embeddings/provider.js";
import type {
  ChunkRef,
  Embedder,
  IndexedFile,
  KeywordHit,
  Progress,
  QueryIndex,
  ScopeFile,
  VectorHit,
} from "./query-index.js";
import type { ChunkedBlob, ChunkStore, VectorStore } from "./stores.js";
import type { KeywordQuery } from "./tokens.js";

export interface ChunkIndexOptions {
  chunks: ChunkStore;
  vectors: VectorStore;
  /** A blob's bytes by content hash, or null when the store no longer has it. */
  read: (hash: Hash) => Promise<Buffer | null>;
  /** Decoded text by content hash, for snippets (e.g. grep's text cache); default: read and decode. */
  text?: (hash: Hash) => Promise<string | null>;
  /** The configured embedding provider (called whenever one is needed; caching is its business). */
  embedder: () => Promise<Embedder>;
  /** Frees what the embedder opened (an ONNX session), when close() runs after it was used. */
  release?: () => Promise<void>;
}

/** Scopes of at most this many blobs are ranked among their own chunks (ChunkStore.keywordWithin). */
const FEW_BLOBS = 32;
/** Blobs chunked per write transaction (progress is reported after each). */
const BUILD_BATCH = 128;
/** Chunk texts per embed call when filling in vectors. */
const EMBED_BATCH = 64;
const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

export class ChunkIndex implements QueryIndex {
  private generation = -1;
  /** Blob hashes known to be chunked, per strategy (the store only ever adds, until a drop). */
  private readonly known = new Map<ChunkStrategy, Set<Hash>>();
  private readonly refs = new Map<ChunkStrategy, Map<Hash, { name: string; chunks: ChunkRef[] }>>();
  /** Vectors by provider id, then chunk hash: content-keyed, so never wrong once loaded. */
  private readonly vectorCache = new Map<string, Map<Hash, Float32Array>>();
  private usedProvider = false;

  constructor(private readonly options: ChunkIndexOptions) {}

  async prepare(files: readonly ScopeFile[], strategy: ChunkStrategy, onProgress?: Progress): Promise<IndexedFile[]> {
    await this.sync();
    const indexed = files.flatMap((f) => (f.hash ? [{ path: f.path, hash: f.hash, size: f.size }] : []));
    const known = this.knownFor(strategy);
    const unseen = new Map<Hash, { hash: Hash; path: string; size: number }>();
    for (const f of indexed) if (!known.has(f.hash) && !unseen.has(f.hash)) unseen.set(f.hash, f);
    if (unseen.size > 0) {
      for (const h of await this.options.chunks.chunked(strategy, [...unseen.keys()])) {
        known.add(h);
        unseen.delete(h);
      }
      await this.build([...unseen.values()], strategy, onProgress);
    }
    return indexed.map(({ path, hash }) => ({ path, hash }));
  }

  /** Chunks blobs not yet in the index, in transactions of BUILD_BATCH blobs. */
  private async build(
    blobs: readonly { hash: Hash; path: string; size: number }[],
    strategy: ChunkStrategy,
    onProgress?: Progress,
  ): Promise<void> {
    const known = this.knownFor(strategy);
    const total = blobs.reduce((sum, b) => sum + b.size, 0);
    let done = 0;
    for (let i = 0; i < blobs.length; i += BUILD_BATCH) {
      const slice = blobs.slice(i, i + BUILD_BATCH);
      const batch: ChunkedBlob[] = [];
      for (const b of slice) {
        const name = baseName(b.path);
        if (b.size > MAX_FILE_BYTES) {
          batch.push({ blob: b.hash, name, chunks: [], skipped: "huge" });
          continue;
        }
        const data = await this.options.read(b.hash);
        if (data) batch.push({ blob: b.hash, ...chunkRecords(data, name, strategy) });
      }
      await this.options.chunks.put(strategy, batch);
      for (const b of batch) known.add(b.blob);
      done += slice.reduce((sum, b) => sum + b.size, 0);
      onProgress?.(done, total);
    }
  }

  async keyword(
    query: KeywordQuery,
    strategy: ChunkStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<KeywordHit[]> {
    // A scope of a few blobs (a file, a small directory) is ranked among their chunks only.
    if (scope.size <= FEW_BLOBS) return this.options.chunks.keywordWithin(strategy, query, [...scope], limit);
    // BM25 runs over the whole index (its statistics too), best first. Usually the scope is most of
    // the index and the best hits are in it; when too few are, rank again within the scope.
    const want = Math.max(64, limit * 2);
    const hits = await this.options.chunks.keyword(strategy, query, want);
    const inScope = hits.filter((h) => scope.has(h.chunk.blob));
    if (inScope.length >= limit || hits.length < want) return inScope.slice(0, limit);
    return this.options.chunks.keywordWithin(strategy, query, [...scope], limit);
  }

  async embedder(): Promise<Embedder> {
    const e = await this.options.embedder();
    if (e.provider) this.usedProvider = true;
    return e;
  }

  async embed(
    provider: EmbeddingProvider,
    strategy: ChunkStrategy,
    scope: ReadonlySet<Hash>,
    options: { max?: number; onProgress?: Progress } = {},
  ): Promise<{ missing: number }> {
    await this.sync();
    const refs = await this.chunksOf(strategy, scope);
    const vectors = await this.vectorsFor(provider, refs);
    // Chunks without a vector, grouped by blob (a blob is read and re-chunked once).
    const todo = new Map<Hash, Set<Hash>>();
    const wanted = new Set<Hash>();
    for (const [blob, { chunks }] of refs) {
      for (const c of chunks) {
        if (vectors.has(c.hash) || wanted.has(c.hash)) continue;
        wanted.add(c.hash);
        let set = todo.get(blob);
        if (!set) {
          set = new Set();
          todo.set(blob, set);
        }
        set.add(c.hash);
      }
    }
    const max = Math.min(options.max ?? Number.POSITIVE_INFINITY, wanted.size);
    let done = 0;
    let pending: { chunk: Hash; text: string }[] = [];
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      const out = await provider.embed(
        batch.map((p) => p.text),
        "document",
      );
      const rows = batch.map((p, i) => ({ chunk: p.chunk, vector: out[i] as Float32Array }));
      await this.options.vectors.put(provider.id, rows);
      for (const r of rows) vectors.set(r.chunk, r.vector);
      done += rows.length;
      options.onProgress?.(done, max);
    };
    for (const [blob, hashes] of todo) {
      if (done + pending.length >= max) break;
      const data = await this.options.read(blob);
      if (!data) continue;
      const name = refs.get(blob)?.name ?? "";
      for (const c of chunkFile(data, name, strategy).chunks) {
        const text = embedText(c);
        const hash = sha256(text);
        if (!hashes.delete(hash) || done + pending.length >= max) continue;
        pending.push({ chunk: hash, text });
        if (pending.length >= EMBED_BATCH) await flush();
      }
    }
    await flush();
    return { missing: wanted.size - done };
  }

  async nearest(
    provider: EmbeddingProvider,
    vector: Float32Array,
    strategy: ChunkStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<VectorHit[]> {
    // Brute force: one dot product per chunk in scope (fine for tens of thousands of chunks).
    const refs = await this.chunksOf(strategy, scope);
    const vectors = await this.vectorsFor(provider, refs);
    const hits: VectorHit[] = [];
    for (const { chunks } of refs.values()) {
      for (const chunk of chunks) {
        const v = vectors.get(chunk.hash);
        if (v && v.length === vector.length) hits.push({ chunk, similarity: dot(v, vector) });
      }
    }
    hits.sort((a, b) => b.similarity - a.similarity || a.chunk.seq - b.chunk.seq);
    return hits.slice(0, limit);
  }

  async text(file: IndexedFile): Promise<string | null> {
    if (this.options.text) return this.options.text(file.hash);
    const data = await this.options.read(file.hash);
    return data ? decodeText(data) : null;
  }

  /** Counts for `afs index status`: chunked blobs and chunks in the whole index, vectors per provider. */
  async stats(
    strategy: ChunkStrategy,
    provider?: string,
  ): Promise<{ blobs: number; chunks: number; vectors?: number }> {
    const counts = await this.options.chunks.stats(strategy);
    return provider === undefined ? counts : { ...counts, vectors: await this.options.vectors.count(provider) };
  }

  /** Chunks and vectors of the given blobs (for status per workspace). */
  async coverage(
    strategy: ChunkStrategy,
    blobs: ReadonlySet<Hash>,
    provider?: EmbeddingProvider,
  ): Promise<{ chunked: number; chunks: number; vectors: number }> {
    await this.sync();
    const refs = await this.chunksOf(strategy, blobs);
    let chunks = 0;
    let vectors = 0;
    const have = provider ? await this.vectorsFor(provider, refs) : new Map<Hash, Float32Array>();
    for (const r of refs.values()) {
      chunks += r.chunks.length;
      for (const c of r.chunks) if (have.has(c.hash)) vectors++;
    }
    return { chunked: refs.size, chunks, vectors };
  }

  /** Forgets every chunk (and, with `vectors`, every vector) so the next build starts over. */
  async drop(options: { vectors?: boolean } = {}): Promise<void> {
    await this.options.chunks.drop();
    if (options.vectors) {
      await this.options.vectors.drop();
      this.vectorCache.clear();
    }
    await this.sync();
  }

  /**
   * Forgets the blobs for which `keep` is false (gc: those the store no longer holds) with their
   * chunks, then the vectors no remaining chunk needs.
   */
  async prune(keep: (blob: Hash) => boolean): Promise<{ blobs: number; chunks: number; vectors: number }> {
    const pruned = await this.options.chunks.prune(keep);
    const vectors = await this.options.vectors.prune();
    await this.sync();
    return { ...pruned, vectors };
  }

  /** Frees embedding models this index opened (an ONNX session); they reopen when next needed. */
  async close(): Promise<void> {
    if (this.usedProvider) await this.options.release?.();
    this.usedProvider = false;
  }

  // --- caches ----------------------------------------------------------------------------------

  /** Forgets cached chunk facts when another process (or this one) dropped the index. */
  private async sync(): Promise<void> {
    const generation = await this.options.chunks.generation();
    if (generation === this.generation) return;
    this.generation = generation;
    this.known.clear();
    this.refs.clear();
  }

  private knownFor(strategy: ChunkStrategy): Set<Hash> {
    let set = this.known.get(strategy);
    if (!set) {
      set = new Set();
      this.known.set(strategy, set);
    }
    return set;
  }

  private async chunksOf(
    strategy: ChunkStrategy,
    blobs: ReadonlySet<Hash>,
  ): Promise<Map<Hash, { name: string; chunks: ChunkRef[] }>> {
    let cache = this.refs.get(strategy);
    if (!cache) {
      cache = new Map();
      this.refs.set(strategy, cache);
    }
    const missing = [...blobs].filter((b) => !cache.has(b));
    if (missing.length > 0) for (const [b, r] of await this.options.chunks.chunksOf(strategy, missing)) cache.set(b, r);
    const out = new Map<Hash, { name: string; chunks: ChunkRef[] }>();
    for (const b of blobs) {
      const r = cache.get(b);
      if (r) out.set(b, r);
    }
    return out;
  }

  private async vectorsFor(
    provider: EmbeddingProvider,
    refs: ReadonlyMap<Hash, { chunks: ChunkRef[] }>,
  ): Promise<Map<Hash, Float32Array>> {
    let cache = this.vectorCache.get(provider.id);
    if (!cache) {
      cache = new Map();
      this.vectorCache.set(provider.id, cache);
    }
    const unknown: Hash[] = [];
    for (const { chunks } of refs.values()) for (const c of chunks) if (!cache.has(c.hash)) unknown.push(c.hash);
    if (unknown.length > 0) for (const [h, v] of await this.options.vectors.get(provider.id, unknown)) cache.set(h, v);
    return cache;
  }
}
