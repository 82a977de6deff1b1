// The home's search indexes (grep's trigrams, ranked search's passages and vectors), keyed by
// content hash and kept in one file beside the store; opened on first use, pruned by gc, closed
// with the engine.
import { existsSync } from "node:fs";
import { EMPTY_SHA256, type Hash } from "../../core/hash.js";
import type { Settings } from "../../core/settings.js";
import { embedderFrom } from "../../search/embedder.js";
import type { EmbeddingProviders } from "../../search/embeddings/open.js";
import { PassageIndex } from "../../search/passage-index.js";
import { IndexDb, indexDbPath } from "../../store/index-db.js";
import { SqlitePassageStore } from "../../store/search/passage-store-sqlite.js";
import { DEFAULT_SYNC_LIMIT, SqliteTextIndex } from "../../store/search/text-index-sqlite.js";
import { SqliteVectorStore } from "../../store/search/vector-store-sqlite.js";
import type { Store } from "../../store/store.js";
import type { IndexPruned } from "../gc.js";

export class SearchFiles {
  private indexDb: IndexDb | undefined;
  private passageIndex: PassageIndex | undefined;
  private contentIndex: SqliteTextIndex | undefined;
  /** Embedding providers query opened for this engine (loaded on first use: costly to import). */
  private embeddings: Promise<EmbeddingProviders> | undefined;

  constructor(
    private readonly store: Store,
    private readonly home: string,
    private readonly settings: Settings,
  ) {}

  /** The index file (derived data keyed by content hash), opened on first use. */
  get db(): IndexDb {
    this.indexDb ??= IndexDb.open(indexDbPath(this.store.url, this.home));
    return this.indexDb;
  }

  /** Ranked search's index (passages, BM25, vectors; keyed by content hash), shared by every workspace. */
  get query(): PassageIndex {
    this.passageIndex ??= new PassageIndex({
      passages: new SqlitePassageStore(() => this.db),
      vectors: new SqliteVectorStore(() => this.db),
      // Empty files are never stored as blobs.
      read: async (hash) => (hash === EMPTY_SHA256 ? Buffer.alloc(0) : this.store.getBlob(hash)),
      // Snippets come from the files grep also reads: share its bounded cache of decoded text.
      text: (hash) => this.text.text(hash),
      embedder: () =>
        embedderFrom(this.settings.env, () => {
          this.embeddings ??= import("../../search/embeddings/open.js").then((m) => new m.EmbeddingProviders());
          return this.embeddings;
        }),
      release: async () => (await this.embeddings)?.close(),
    });
    return this.passageIndex;
  }

  /** grep's content index (trigrams keyed by content hash) and text cache, shared by every workspace. */
  get text(): SqliteTextIndex {
    this.contentIndex ??= new SqliteTextIndex(() => this.db, this.store, {
      cacheUnits: this.settings.textCacheBytes,
      syncLimit: syncLimitOf(this.settings.env.AFS_INDEX_SYNC_BLOBS),
      onBacklog: (missing) => this.onBacklog?.(missing),
    });
    return this.contentIndex;
  }

  /**
   * Told when a search found more contents not indexed than it indexes itself (it scans them):
   * the CLI starts a background builder here. Unset (a library user): searches scan until
   * `afs index build` or a builder indexes them.
   */
  onBacklog: ((missing: number) => void) | undefined;

  /** Drops the index rows of blobs gc deleted; no index file, no work. */
  async prune(deleted: ReadonlySet<Hash>): Promise<IndexPruned | undefined> {
    if (!this.indexDb && !existsSync(indexDbPath(this.store.url, this.home))) return undefined;
    const keep = (hash: Hash): boolean => !deleted.has(hash);
    const text_blobs = await this.text.prune(keep);
    const query = await this.query.prune(keep);
    return { text_blobs, query_blobs: query.blobs, chunks: query.chunks, vectors: query.vectors };
  }

  async close(): Promise<void> {
    await this.passageIndex?.close();
    this.indexDb?.close();
  }
}

/** AFS_INDEX_SYNC_BLOBS: most contents a search indexes before it answers (the rest it scans). */
function syncLimitOf(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isInteger(n) && n >= 0 ? n : DEFAULT_SYNC_LIMIT;
}
