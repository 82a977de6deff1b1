// The persistent query index of an afs home: passages, BM25 and vectors keyed by content hash, so a
// blob is split once for every workspace and checkpoint that holds it and an edit re-splits only
// the new blob. Work happens lazily (blobs in scope not yet split are split when a query needs
// them) or up front (`afs index build`). Storage is behind PassageStore and VectorStore.
import { type Hash, sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { dot, type EmbeddingProvider } from "./embeddings/provider.js";
import { embedText, passageRecords } from "./passage-records.js";
import { filePassages, MAX_FILE_BYTES, type PassageStrategy } from "./passages.js";
import type {
  Embedder,
  IndexedFile,
  KeywordHit,
  PassageRef,
  Progress,
  QueryIndex,
  ScopeFile,
  VectorHit,
} from "./query-index.js";
import type { BlobPassages, PassageStore, VectorStore } from "./stores.js";
import type { KeywordQuery } from "./words.js";

export interface PassageIndexOptions {
  passages: PassageStore;
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

/** Scopes of at most this many blobs are ranked among their own passages (PassageStore.keywordWithin). */
const FEW_BLOBS = 32;
/** Blobs split into passages per write transaction (progress is reported after each). */
const BUILD_BATCH = 128;
/** Passage texts per embed call when filling in vectors. */
const EMBED_BATCH = 64;
const baseName = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

export class PassageIndex implements QueryIndex {
  private generation = -1;
  /** Blob hashes known to be split, per strategy (the store only ever adds, until a drop). */
  private readonly known = new Map<PassageStrategy, Set<Hash>>();
  private readonly refs = new Map<PassageStrategy, Map<Hash, { name: string; passages: PassageRef[] }>>();
  /** Vectors by provider id, then passage hash: content-keyed, so never wrong once loaded. */
  private readonly vectorCache = new Map<string, Map<Hash, Float32Array>>();
  private usedProvider = false;

  constructor(private readonly options: PassageIndexOptions) {}

  /**
   * Splits the files' contents not split yet. `keep: false` (a build's batch) leaves what it learns
   * out of this index's memory of split blobs, so a build of a million files does not hold them.
   */
  async prepare(
    files: readonly ScopeFile[],
    strategy: PassageStrategy,
    onProgress?: Progress,
    options: { keep?: boolean } = {},
  ): Promise<IndexedFile[]> {
    await this.sync();
    const indexed = files.flatMap((f) => (f.hash ? [{ path: f.path, hash: f.hash, size: f.size }] : []));
    const known = this.knownFor(strategy);
    const learnt = options.keep === false ? new Set<Hash>() : known;
    const unseen = new Map<Hash, { hash: Hash; path: string; size: number }>();
    for (const f of indexed) if (!known.has(f.hash) && !unseen.has(f.hash)) unseen.set(f.hash, f);
    if (unseen.size > 0) {
      for (const h of await this.options.passages.indexed(strategy, [...unseen.keys()])) {
        learnt.add(h);
        unseen.delete(h);
      }
      await this.build([...unseen.values()], strategy, learnt, onProgress);
    }
    return indexed.map(({ path, hash }) => ({ path, hash }));
  }

  /** Splits blobs not yet in the index, in transactions of BUILD_BATCH blobs; adds them to `known`. */
  private async build(
    blobs: readonly { hash: Hash; path: string; size: number }[],
    strategy: PassageStrategy,
    known: Set<Hash>,
    onProgress?: Progress,
  ): Promise<void> {
    const total = blobs.reduce((sum, b) => sum + b.size, 0);
    let done = 0;
    for (let i = 0; i < blobs.length; i += BUILD_BATCH) {
      const slice = blobs.slice(i, i + BUILD_BATCH);
      const batch: BlobPassages[] = [];
      for (const b of slice) {
        const name = baseName(b.path);
        if (b.size > MAX_FILE_BYTES) {
          batch.push({ blob: b.hash, name, passages: [], skipped: "huge" });
          continue;
        }
        const data = await this.options.read(b.hash);
        if (data) batch.push({ blob: b.hash, ...passageRecords(data, name, strategy) });
      }
      await this.options.passages.put(strategy, batch);
      for (const b of batch) known.add(b.blob);
      done += slice.reduce((sum, b) => sum + b.size, 0);
      onProgress?.(done, total);
    }
  }

  async keyword(
    query: KeywordQuery,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<KeywordHit[]> {
    // A scope of a few blobs (a file, a small directory) is ranked among their passages only.
    if (scope.size <= FEW_BLOBS) return this.options.passages.keywordWithin(strategy, query, [...scope], limit);
    // BM25 runs over the whole index (its statistics too), best first. Usually the scope is most of
    // the index and the best hits are in it; when too few are, rank again within the scope.
    const want = Math.max(64, limit * 2);
    const hits = await this.options.passages.keyword(strategy, query, want);
    const inScope = hits.filter((h) => scope.has(h.passage.blob));
    if (inScope.length >= limit || hits.length < want) return inScope.slice(0, limit);
    return this.options.passages.keywordWithin(strategy, query, [...scope], limit);
  }

  async embedder(): Promise<Embedder> {
    const e = await this.options.embedder();
    if (e.provider) this.usedProvider = true;
    return e;
  }

  async embed(
    provider: EmbeddingProvider,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    options: { max?: number; onProgress?: Progress } = {},
  ): Promise<{ missing: number }> {
    await this.sync();
    const refs = await this.passagesOf(strategy, scope);
    const vectors = await this.vectorsFor(provider, refs);
    // Passages without a vector, grouped by blob (a blob is read and re-split once).
    const todo = new Map<Hash, Set<Hash>>();
    const wanted = new Set<Hash>();
    for (const [blob, { passages }] of refs) {
      for (const c of passages) {
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
    let pending: { passage: Hash; text: string }[] = [];
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      const out = await provider.embed(
        batch.map((p) => p.text),
        "document",
      );
      const rows = batch.map((p, i) => ({ passage: p.passage, vector: out[i] as Float32Array }));
      await this.options.vectors.put(provider.id, rows);
      for (const r of rows) vectors.set(r.passage, r.vector);
      done += rows.length;
      options.onProgress?.(done, max);
    };
    for (const [blob, hashes] of todo) {
      if (done + pending.length >= max) break;
      const data = await this.options.read(blob);
      if (!data) continue;
      const name = refs.get(blob)?.name ?? "";
      for (const c of filePassages(data, name, strategy).passages) {
        const text = embedText(c);
        const hash = sha256(text);
        if (!hashes.delete(hash) || done + pending.length >= max) continue;
        pending.push({ passage: hash, text });
        if (pending.length >= EMBED_BATCH) await flush();
      }
    }
    await flush();
    return { missing: wanted.size - done };
  }

  async nearest(
    provider: EmbeddingProvider,
    vector: Float32Array,
    strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<VectorHit[]> {
    // Brute force: one dot product per passage in scope (fine for tens of thousands of passages).
    const refs = await this.passagesOf(strategy, scope);
    const vectors = await this.vectorsFor(provider, refs);
    const hits: VectorHit[] = [];
    for (const { passages } of refs.values()) {
      for (const passage of passages) {
        const v = vectors.get(passage.hash);
        if (v && v.length === vector.length) hits.push({ passage, similarity: dot(v, vector) });
      }
    }
    hits.sort((a, b) => b.similarity - a.similarity || a.passage.seq - b.passage.seq);
    return hits.slice(0, limit);
  }

  async text(file: IndexedFile): Promise<string | null> {
    if (this.options.text) return this.options.text(file.hash);
    const data = await this.options.read(file.hash);
    return data ? decodeText(data) : null;
  }

  /** Counts for `afs index status`: blobs split and their passages in the whole index, vectors per provider. */
  async stats(
    strategy: PassageStrategy,
    provider?: string,
  ): Promise<{ blobs: number; chunks: number; vectors?: number }> {
    const counts = await this.options.passages.stats(strategy);
    return provider === undefined ? counts : { ...counts, vectors: await this.options.vectors.count(provider) };
  }

  /**
   * Passages and vectors of each of the given blobs split with `strategy` (blobs not split are
   * absent), for `afs index status`, which asks batch by batch over every workspace's contents:
   * nothing is cached, so the status of a million files holds one batch's passages at a time.
   */
  async coverage(
    strategy: PassageStrategy,
    blobs: readonly Hash[],
    provider?: EmbeddingProvider,
  ): Promise<Map<Hash, { chunks: number; vectors: number }>> {
    const refs = await this.options.passages.passagesOf(strategy, blobs);
    const have = provider
      ? await this.options.vectors.get(
          provider.id,
          [...refs.values()].flatMap((r) => r.passages.map((c) => c.hash)),
        )
      : undefined;
    const out = new Map<Hash, { chunks: number; vectors: number }>();
    for (const [blob, r] of refs) {
      let vectors = 0;
      for (const c of r.passages) if (have?.has(c.hash)) vectors++;
      out.set(blob, { chunks: r.passages.length, vectors });
    }
    return out;
  }

  /** Forgets every passage (and, with `vectors`, every vector) so the next build starts over. */
  async drop(options: { vectors?: boolean } = {}): Promise<void> {
    await this.options.passages.drop();
    if (options.vectors) {
      await this.options.vectors.drop();
      this.vectorCache.clear();
    }
    await this.sync();
  }

  /**
   * Forgets the blobs for which `keep` is false (gc: those the store no longer holds) with their
   * passages, then the vectors no remaining passage needs.
   */
  async prune(keep: (blob: Hash) => boolean): Promise<{ blobs: number; chunks: number; vectors: number }> {
    const pruned = await this.options.passages.prune(keep);
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

  /** Forgets cached passage facts when another process (or this one) dropped the index. */
  private async sync(): Promise<void> {
    const generation = await this.options.passages.generation();
    if (generation === this.generation) return;
    this.generation = generation;
    this.known.clear();
    this.refs.clear();
  }

  private knownFor(strategy: PassageStrategy): Set<Hash> {
    let set = this.known.get(strategy);
    if (!set) {
      set = new Set();
      this.known.set(strategy, set);
    }
    return set;
  }

  private async passagesOf(
    strategy: PassageStrategy,
    blobs: ReadonlySet<Hash>,
  ): Promise<Map<Hash, { name: string; passages: PassageRef[] }>> {
    let cache = this.refs.get(strategy);
    if (!cache) {
      cache = new Map();
      this.refs.set(strategy, cache);
    }
    const missing = [...blobs].filter((b) => !cache.has(b));
    if (missing.length > 0)
      for (const [b, r] of await this.options.passages.passagesOf(strategy, missing)) cache.set(b, r);
    const out = new Map<Hash, { name: string; passages: PassageRef[] }>();
    for (const b of blobs) {
      const r = cache.get(b);
      if (r) out.set(b, r);
    }
    return out;
  }

  private async vectorsFor(
    provider: EmbeddingProvider,
    refs: ReadonlyMap<Hash, { passages: PassageRef[] }>,
  ): Promise<Map<Hash, Float32Array>> {
    let cache = this.vectorCache.get(provider.id);
    if (!cache) {
      cache = new Map();
      this.vectorCache.set(provider.id, cache);
    }
    const unknown: Hash[] = [];
    for (const { passages } of refs.values()) for (const c of passages) if (!cache.has(c.hash)) unknown.push(c.hash);
    if (unknown.length > 0) for (const [h, v] of await this.options.vectors.get(provider.id, unknown)) cache.set(h, v);
    return cache;
  }
}
