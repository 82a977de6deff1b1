// The content index in the index file (afs.index.db): one row per blob hash, posting lists of the
// text blobs holding each trigram (search/trigrams.ts, postings-sqlite.ts), and for a text of
// several blocks (search/text-blocks.ts) a Bloom filter of each block's trigrams. Blobs are
// indexed lazily, in batches, the first time a search has them in scope.

import { AfsError } from "../../core/errors.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../../core/hash.js";
import { WeightedLru } from "../../core/lru.js";
import { DEFAULT_TEXT_CACHE_BYTES } from "../../core/settings.js";
import { decodeText } from "../../core/text.js";
import { BANDS, BlockFilters, type ProbeTree, queryProbes, TRANSPOSE_MIN_BLOCKS } from "../../search/block-filters.js";
import { countLines } from "../../search/count-lines.js";
import { type EncodedPostings, PART_POSTINGS, type PostingQuery, PostingsBuilder } from "../../search/postings.js";
import { TextCache } from "../../search/text-cache.js";
import type {
  BlockRun,
  BuilderProgress,
  BuildOptions,
  LiteralQuery,
  TextIndex,
  TextIndexBuild,
  TextIndexStatus,
} from "../../search/text-index.js";
import { literalKeys } from "../../search/trigram-token.js";
import { BLOOM_BYTES } from "../../search/trigrams.js";
import { SEEKABLE_MIN } from "../blob-codec.js";
import { componentStatements, type IndexDb } from "../index-db.js";
import type { Store } from "../store.js";
import { prepareTextIndex, TEXT_INDEX_SCHEMA, type TextIndexStatements } from "./text-index-tables.js";
import { type Pending, type RowHead, readPendings, rowHead, State, type TextRow, textRow } from "./text-rows.js";

interface Known {
  id: number;
  state: State;
  /** Blocks of the text; above 1, text_blooms holds a filter per block. */
  blocks: number;
}

/** What the index knows of a search's hashes (by position), by what each kind of blob needs. */
interface Scope {
  epoch: number;
  known: readonly (Known | undefined)[];
  /** Text blobs: row id → position. */
  byId: Map<number, number>;
  texts: number[];
  /** Blobs too large to index. */
  large: number[];
  /** Blobs not indexed yet, left to the background builder: candidates, scanned whole. */
  unindexed: number[];
}

/**
 * A scope text_scopes says was wholly indexed in this generation: nothing in it needs indexing, so
 * only the rows a query names are looked up, and kept if they are in scope.
 */
interface MarkedScope {
  epoch: number;
  large: readonly Hash[];
}

/** The blocks of each candidate blob that may hold a match; null: all of them. */
export type Candidates = Map<Hash, readonly number[] | null>;

export interface SqliteTextIndexOptions {
  /** Blobs larger than this are not indexed (searches scan them). Default 64 MiB. */
  maxIndexBytes?: number;
  /** Text cache budget in bytes of text; default from AFS_TEXT_CACHE_MB or 256 MiB. */
  cacheUnits?: number;
  /**
   * Most blobs a search indexes itself before it answers (default 50,000: a few seconds). Beyond
   * that (a tree just imported), or beyond a few while a background builder runs, the search scans
   * the blobs not indexed yet and calls `onBacklog`, which may start a builder.
   */
  syncLimit?: number;
  /** Told the number of blobs a search found not indexed and left to a builder. */
  onBacklog?: (missing: number) => void;
}

/** Blobs a search still indexes itself while a builder runs (an edit or two since it walked). */
const SYNC_WHILE_BUILDING = 1000;
export const DEFAULT_SYNC_LIMIT = 50_000;

const EMPTY = new Uint8Array(0);
/** Bytes of text per indexing transaction: bounds memory, and lets progress move. */
const BATCH_BYTES = 16 * 1024 * 1024;
const LOOKUP_CHUNK = 500;
/**
 * Rows kept in memory by hash before they are all forgotten. Twice the largest tree a process is
 * meant to search warm (1M files): at exactly the tree's size, one new content forgot every row and
 * the next search looked up each of them again.
 */
const MAX_KNOWN = 2_000_000;
/**
 * Trees whose maps of contents to paths are kept (the newest): a workspace's head and a checkpoint
 * or two. Each holds a row per file, so older ones go.
 */
export const MAX_TREES = 4;
/** Texts the postings may name for a tree search to map them by lookups; beyond, walking the tree is as good. */
const MAX_TREE_MATCHES = 20_000;
/** Files of a tree's map written per transaction (writeTreeMap): bounds memory and each hold of the write lock. */
const MAP_BATCH = 20_000;
/** Scope markers kept (the newest): one per tree and filter searched by a process that had to look it up. */
const MAX_SCOPES = 1000;

/** A file of a stored tree: its path relative to the tree (no leading "/") and its content hash. */
export interface TreeFile {
  path: string;
  hash: Hash;
}

/** Adjacent candidate blocks of a text: their bytes [start, end) and the number of the line at start. */
interface Span {
  start: number;
  end: number;
  line: number;
}

const sameBlocks = (a: readonly number[], b: readonly number[]): boolean =>
  a === b || (a.length === b.length && a.every((x, i) => x === b[i]));

export class SqliteTextIndex implements TextIndex {
  private readonly known = new Map<Hash, Known>();
  /** Scopes by the hash array a search passed; valid while `epoch` (bumped when `known` is cleared) is theirs. */
  private readonly scopes = new WeakMap<readonly Hash[], Scope>();
  /** Marked scopes by hash array, under the same epoch rule. */
  private readonly marked = new WeakMap<readonly Hash[], MarkedScope>();
  /** Hashes of the rows looked up, by row id (how a marked scope names the rows a query matched). */
  private readonly ids = new Map<number, Hash>();
  private epoch = 0;
  /** Block filters by blob id, as the searches need them (they are ~1/8 of the text they cover). */
  private blooms = bloomCache();
  private readonly cache: TextCache;
  /** Runs read alone, by blob, with the blocks they hold. */
  private readonly partial = new WeightedLru<Hash, { blocks: readonly number[]; runs: BlockRun[] }>(
    64 * 1024 * 1024,
    (p) => p.runs.reduce((n, r) => n + r.view.length + 64, 0),
  );
  /** Texts searches asked for in blocks more than once, to be read whole in the background (see runs). */
  private readonly toWarm = new Set<Hash>();
  private warming: Promise<void> | undefined;
  /** Blobs larger than this are not indexed (see SqliteTextIndexOptions). */
  readonly maxIndexBytes: number;
  private readonly syncLimit: number;
  private readonly onBacklog: ((missing: number) => void) | undefined;
  private readonly statements: () => TextIndexStatements;
  private generation = -1;
  /** Trees this process recorded or found recorded (generation and hash), so it does not ask again. */
  private readonly recorded = new Set<string>();

  /** `index` is called on first use, so a volume that never searches never opens the index file. */
  constructor(
    index: () => IndexDb,
    private readonly store: Store,
    options: SqliteTextIndexOptions = {},
  ) {
    this.statements = componentStatements(index, "text", TEXT_INDEX_SCHEMA, prepareTextIndex);
    this.cache = new TextCache(options.cacheUnits ?? DEFAULT_TEXT_CACHE_BYTES);
    this.maxIndexBytes = options.maxIndexBytes ?? 64 * 1024 * 1024;
    this.syncLimit = options.syncLimit ?? DEFAULT_SYNC_LIMIT;
    this.onBacklog = options.onBacklog;
  }

  private get st(): TextIndexStatements {
    return this.statements();
  }

  async build(hashes: Iterable<Hash>, options: BuildOptions = {}): Promise<TextIndexBuild> {
    this.checkGeneration();
    const missing = this.lookup(this.unknown(hashes));
    const built = await this.indexMissing(missing, options);
    // A builder's batch: nothing of it stays in memory (the rows are looked up again when searched).
    if (options.keep === false) this.forget();
    return built;
  }

  async candidates(hashes: readonly Hash[], query: LiteralQuery): Promise<Candidates> {
    this.checkGeneration();
    const expression = postingQuery(query);
    if (expression !== null && this.scopes.get(hashes)?.epoch !== this.epoch && this.unfamiliar(hashes)) {
      // One read transaction: the generation, the marker and the rows the postings name agree.
      const found = this.st.db
        .transaction(() => {
          this.checkGeneration();
          return this.markedCandidates(hashes, expression, query);
        })
        .deferred();
      if (found) return found;
    }
    const scope = await this.scopeOf(hashes);
    const out: Candidates = new Map();
    // Not indexed yet (left to the builder): every one may match, scanned whole.
    for (const i of scope.unindexed) out.set(hashes[i] as Hash, null);
    if (expression === null) {
      for (const i of scope.texts) out.set(hashes[i] as Hash, null);
      for (const i of scope.large) out.set(hashes[i] as Hash, null);
      return out;
    }
    // The index answers first; only the rows it names are looked at (a rare literal names few).
    const probes = queryProbes(query);
    for (const id of this.st.postings.match(expression)) {
      const i = scope.byId.get(id);
      if (i !== undefined) this.addCandidate(out, hashes[i] as Hash, scope.known[i] as Known, probes);
    }
    // Too large to index: always candidates, to be scanned.
    for (const i of scope.large) out.set(hashes[i] as Hash, null);
    return out;
  }

  async treeCandidates(
    tree: Hash,
    query: LiteralQuery,
  ): Promise<{ candidates: Candidates; files: { path: string; hash: Hash }[] } | null> {
    const expression = postingQuery(query);
    if (expression === null) return null;
    const st = this.st;
    // One read transaction: the generation, the tree's map and the rows the postings name agree.
    return st.db
      .transaction(() => {
        this.checkGeneration();
        const row = st.tree.get(tree, this.generation) as { id: number; large: string } | undefined;
        if (!row) return null;
        const ids = Array.from(st.postings.match(expression));
        if (ids.length > MAX_TREE_MATCHES) return null;
        const large = JSON.parse(row.large) as number[];
        const named = [...ids, ...large];
        this.remember(
          named.filter((id) => !this.ids.has(id)),
          st.byIds,
        );
        const probes = queryProbes(query);
        const candidates: Candidates = new Map();
        const wanted: number[] = [];
        for (const id of ids) {
          const hash = this.ids.get(id);
          const k = hash === undefined ? undefined : this.known.get(hash);
          if (hash === undefined || k?.state !== State.Text) continue;
          this.addCandidate(candidates, hash, k, probes);
          if (candidates.has(hash)) wanted.push(id);
        }
        for (const id of large) {
          const hash = this.ids.get(id);
          // A row of the map gone from memory (too many remembered at once): walk instead.
          if (hash === undefined) return null;
          candidates.set(hash, null);
          wanted.push(id);
        }
        const files: { path: string; hash: Hash }[] = [];
        for (let i = 0; i < wanted.length; i += LOOKUP_CHUNK) {
          const batch = JSON.stringify(wanted.slice(i, i + LOOKUP_CHUNK));
          for (const f of st.treeFiles.all(row.id, batch) as { blob: number; path: string }[]) {
            const hash = this.ids.get(f.blob);
            if (hash === undefined) return null;
            files.push({ path: f.path, hash });
          }
        }
        return { candidates, files };
      })
      .deferred();
  }

  async recordTree(tree: Hash, files: readonly TreeFile[]): Promise<void> {
    this.checkGeneration();
    const key = `${this.generation}\u0000${tree}`;
    if (this.recorded.has(key)) return;
    const st = this.st;
    // Recorded by an earlier process: no need to look up every content (a search whose literal the
    // map cannot answer, matching over MAX_TREE_MATCHES rows, walks and comes here each time).
    if (st.tree.get(tree, this.generation) !== undefined) {
      this.recorded.add(key);
      return;
    }
    // Every content must be indexed (a row in text_blobs); one not yet (left to the builder) would
    // be missed by a search that trusts the map, so no map until the builder is done.
    if (this.lookup(this.unknown(files.map((f) => f.hash))).length > 0) return;
    await this.writeTreeMap(tree, files);
  }

  /**
   * Writes the map of contents to paths of stored tree `tree` (see treeCandidates) from `files`, its
   * files with paths relative to it, taken as they come: a background builder streams a walk of
   * the tree, so neither it nor this holds a million paths at once. Rows go in transactions of
   * `batch` files under a row whose generation (its writer's negated pid) no search trusts; the
   * generation that makes the map valid is written last, so a writer killed midway leaves a map
   * never used (the next writer of the tree, or eviction, deletes it). Binary contents are left out.
   *
   * True when the tree has a valid map now (written here or before); false when some content is
   * not indexed, another live process is writing this map, or the index was cleared or pruned
   * meanwhile (the ids would be void).
   */
  async writeTreeMap(
    tree: Hash,
    files: Iterable<TreeFile> | AsyncIterable<TreeFile>,
    batch = MAP_BATCH,
  ): Promise<boolean> {
    this.checkGeneration();
    const generation = this.generation;
    const key = `${generation}\u0000${tree}`;
    if (this.recorded.has(key)) return true;
    const st = this.st;
    const writing = -process.pid;
    const id = st.db
      .transaction((): number | "valid" | "busy" => {
        if ((st.generation.get() as number) !== generation) return "busy";
        const row = st.treeRow.get(tree) as { id: number; generation: number } | undefined;
        if (row?.generation === generation) return "valid";
        if (row && row.generation < 0 && processAlive(-row.generation)) return "busy";
        // A map of another generation (void), or one its writer left half-written when it died.
        if (row) {
          st.deleteTreeFiles.run(row.id);
          st.deleteTree.run(row.id);
        }
        return Number(st.insertTree.run(tree, writing, "[]").lastInsertRowid);
      })
      .immediate();
    if (id === "valid") this.recorded.add(key);
    if (typeof id !== "number") return id === "valid";
    // Still this writer's map, in the generation it started in: else (evicted, taken over, cleared) it stops.
    const ours = () => st.treeGeneration.get(id, tree) === writing && (st.generation.get() as number) === generation;
    const large = new Set<number>();
    let rows: TreeFile[] = [];
    const flush = (): boolean =>
      st.db
        .transaction(() => {
          if (!ours()) return false;
          const known = this.rowsOf(rows.map((f) => f.hash));
          for (const f of rows) {
            const k = known.get(f.hash);
            if (!k) return false;
            if (k.state === State.Binary) continue;
            if (k.state === State.Large) large.add(k.id);
            st.insertTreeFile.run(id, k.id, f.path);
          }
          rows = [];
          return true;
        })
        .immediate();
    let done = false;
    try {
      // An array (a search's listing) without a turn of the event loop per file.
      if (Array.isArray(files)) {
        for (const f of files as readonly TreeFile[]) {
          rows.push(f);
          if (rows.length >= batch && !flush()) return false;
        }
      } else {
        for await (const f of files) {
          rows.push(f);
          if (rows.length >= batch && !flush()) return false;
        }
      }
      if (rows.length > 0 && !flush()) return false;
      done = st.db
        .transaction(() => {
          if (!ours()) return false;
          st.finishTree.run(generation, JSON.stringify([...large]), id);
          for (const old of st.oldTrees.all(MAX_TREES) as number[]) {
            st.deleteTreeFiles.run(old);
            st.deleteTree.run(old);
          }
          return true;
        })
        .immediate();
      if (done) this.recorded.add(key);
      return done;
    } finally {
      // Stopped midway (a content not indexed, a read that failed): what this writer wrote goes.
      if (!done) {
        st.db
          .transaction(() => {
            if (st.treeGeneration.get(id, tree) !== writing) return;
            st.deleteTreeFiles.run(id);
            st.deleteTree.run(id);
          })
          .immediate();
      }
    }
  }

  /** Whether `tree` has a map of contents to paths valid now (see writeTreeMap). */
  hasTreeMap(tree: Hash): boolean {
    this.checkGeneration();
    return this.st.tree.get(tree, this.generation) !== undefined;
  }

  /**
   * The rows of these hashes, from memory or else the database, without remembering those read
   * (a builder mapping a million paths keeps none of them).
   */
  private rowsOf(hashes: readonly Hash[]): Map<Hash, Known> {
    const out = new Map<Hash, Known>();
    const unknown: Hash[] = [];
    for (const h of hashes) {
      const k = this.known.get(h);
      if (k) out.set(h, k);
      else unknown.push(h);
    }
    for (let i = 0; i < unknown.length; i += LOOKUP_CHUNK) {
      const chunk = JSON.stringify(unknown.slice(i, i + LOOKUP_CHUNK));
      for (const row of this.st.lookup.all(chunk) as (Known & { hash: Hash })[]) {
        out.set(row.hash, { id: row.id, state: row.state, blocks: row.blocks });
      }
    }
    return out;
  }

  /**
   * Whether this process may not know `hashes` yet, by a few of them: a new process, or a new
   * workspace, is then better served by a marker than by looking up every hash; a warm process
   * whose tree changed by an edit or two still knows them and goes on as before.
   */
  private unfamiliar(hashes: readonly Hash[]): boolean {
    if (hashes.length === 0) return false;
    const probe = [0, hashes.length >> 1, hashes.length - 1];
    return probe.some((i) => !this.known.has(hashes[i] as Hash));
  }

  /** Candidates from a marked scope (see MarkedScope), or null when `hashes` has no valid marker. */
  private markedCandidates(hashes: readonly Hash[], expression: PostingQuery, query: LiteralQuery): Candidates | null {
    let scope = this.marked.get(hashes);
    if (scope?.epoch !== this.epoch) {
      const large = this.st.scope.get(scopeDigest(hashes), this.generation) as string | undefined;
      if (large === undefined) return null;
      scope = { epoch: this.epoch, large: JSON.parse(large) as Hash[] };
      this.marked.set(hashes, scope);
    }
    const ids = Array.from(this.st.postings.match(expression));
    this.remember(
      ids.filter((id) => !this.ids.has(id)),
      this.st.byIds,
    );
    const named = new Map<Hash, Known>();
    for (const id of ids) {
      const hash = this.ids.get(id);
      const k = hash === undefined ? undefined : this.known.get(hash);
      if (k?.state === State.Text) named.set(hash as Hash, k);
    }
    // One pass over the scope asking a map of the few named rows: cheaper than a set of the scope.
    const probes = queryProbes(query);
    const out: Candidates = new Map();
    for (const hash of named.size > 0 ? hashes : []) {
      const k = named.get(hash);
      if (k) this.addCandidate(out, hash, k, probes);
    }
    for (const hash of scope.large) out.set(hash, null);
    return out;
  }

  private addCandidate(out: Candidates, hash: Hash, k: Known, probes: ProbeTree): void {
    if (k.blocks <= 1) out.set(hash, null);
    else {
      const blocks = this.blocksMatching(k, probes);
      if (blocks.length > 0) out.set(hash, blocks);
    }
  }

  /**
   * What the index knows of each of `hashes`, indexing those it does not know yet. Kept for the
   * array (a search over an unchanged tree passes the same one) until the ids it holds may be void.
   */
  private async scopeOf(hashes: readonly Hash[]): Promise<Scope> {
    const cached = this.scopes.get(hashes);
    if (cached?.epoch === this.epoch) return cached;
    // One pass over the scope: a warm process knows every hash already and indexes nothing.
    const known: (Known | undefined)[] = hashes.map((h) => this.known.get(h));
    const looked = known.includes(undefined);
    let deferred = false;
    if (looked) {
      const missing = this.lookup(this.unknown(hashes));
      if (missing.length > (this.building() ? SYNC_WHILE_BUILDING : this.syncLimit)) {
        // Too many to index before answering: a builder does it, this search scans them.
        deferred = true;
        this.onBacklog?.(missing.length);
        hashes.forEach((h, i) => {
          known[i] ??= this.known.get(h);
        });
      } else {
        await this.indexMissing(missing);
        hashes.forEach((h, i) => {
          known[i] ??= this.known.get(h) ?? this.fetchOne(h);
        });
      }
    }
    const scope: Scope = { epoch: this.epoch, known, byId: new Map(), texts: [], large: [], unindexed: [] };
    let complete = true;
    known.forEach((k, i) => {
      if (!k) {
        complete = false;
        if (deferred) scope.unindexed.push(i);
      } else if (k.state === State.Text) {
        scope.byId.set(k.id, i);
        scope.texts.push(i);
      } else if (k.state === State.Large) scope.large.push(i);
    });
    // A blob another process is still indexing is asked about again next time.
    if (complete) {
      this.scopes.set(hashes, scope);
      // Having paid for the lookup, leave the next process a marker (a warm process, which looked
      // up nothing, does not write one on every search of an edited tree).
      if (looked) this.mark(hashes, scope);
    }
    return scope;
  }

  /** Records that every hash of `hashes` is indexed in this generation (see MarkedScope). */
  private mark(hashes: readonly Hash[], scope: Scope): void {
    const st = this.st;
    const digest = scopeDigest(hashes);
    // Already marked (a search that needs every text, which a marker cannot answer): no write.
    if (st.scope.get(digest, this.generation) !== undefined) return;
    const large = JSON.stringify(scope.large.map((i) => hashes[i]));
    st.db
      .transaction(() => {
        st.mark.run(digest, this.generation, large);
        st.trimScopes.run(MAX_SCOPES);
      })
      .immediate();
  }

  beginSearch(): void {
    this.cache.nextPass();
  }

  async text(hash: Hash): Promise<string | null> {
    const view = this.cache.get(hash);
    if (view !== undefined) return Buffer.from(view, "latin1").toString("utf8");
    if (this.known.get(hash)?.state === State.Binary) return null;
    return decodeText(await this.blob(hash));
  }

  async view(hash: Hash): Promise<string | null> {
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    if (this.known.get(hash)?.state !== State.Text) return null;
    // Indexed as text, so valid UTF-8: no need to decode it again.
    const view = (await this.blob(hash)).toString("latin1");
    this.cache.set(hash, view);
    return view;
  }

  async runs(hash: Hash, blocks: readonly number[]): Promise<BlockRun[] | null> {
    if (blocks.length === 0 || this.cache.get(hash) !== undefined) return null;
    const k = this.known.get(hash);
    if (k?.state !== State.Text || k.blocks <= 1) return null;
    const earlier = this.partial.get(hash);
    // The same blocks (the same search at another path, or the same query again): the same runs.
    if (earlier && sameBlocks(earlier.blocks, blocks)) return earlier.runs;
    // Asked again by another search: this process searches often, so it keeps the whole text for
    // the next ones, read in the background. Read here, it cost this search ~2× a cold process's
    // time (whole 4 MiB chunks of every candidate bundle); this one reads its blocks, as the first did.
    if (earlier) this.warmLater(hash);
    const row = this.st.lines.get(k.id) as Buffer | null | undefined;
    if (!row || row.length !== (2 * k.blocks + 1) * 8) return null;
    const lines = new Float64Array(new Uint8Array(row).buffer);
    const spans: Span[] = [];
    let bytes = 0;
    for (const b of blocks) {
      if (b < 0 || b >= k.blocks) return null;
      const start = lines[2 * b] as number;
      const end = lines[2 * b + 2] as number;
      bytes += end - start;
      const last = spans[spans.length - 1];
      if (last && last.end === start) last.end = end;
      else spans.push({ start, end, line: lines[2 * b + 1] as number });
    }
    const size = lines[2 * k.blocks] as number;
    if (bytes * 2 > size) return null;
    // One read for all of them: the store fetches each stored value once and inflates only the
    // segments the spans cover (blob-codec.ts).
    const datas = await this.store.readBlobRanges(
      hash,
      spans.map((s) => ({ offset: s.start, length: s.end - s.start })),
    );
    if (!datas) return null;
    const runs: BlockRun[] = [];
    for (const [i, { start, end, line }] of spans.entries()) {
      const data = datas[i] as Buffer;
      if (data.byteLength !== end - start) return null;
      runs.push({ start, line, view: data.toString("latin1") });
    }
    this.partial.set(hash, { blocks, runs });
    return runs;
  }

  async countLines(hashes: readonly Hash[], literal: string, max: number): Promise<Map<Hash, number>> {
    const out = new Map<Hash, number>();
    const needle = Buffer.from(literal, "utf8");
    const latin1 = needle.toString("latin1");
    const unread: Hash[] = [];
    for (const hash of hashes) {
      if (out.has(hash) || this.known.get(hash)?.state !== State.Text) continue;
      const cached = this.cache.get(hash);
      if (cached !== undefined) out.set(hash, countLines(cached, latin1, max));
      else unread.push(hash);
    }
    // Values under SEEKABLE_MIN are one stream, read whole by any reader; larger texts are left to
    // `runs`, which reads only their candidate blocks.
    await this.store.eachSmallBlob(unread, SEEKABLE_MIN - 1, (hash, bytes) => {
      out.set(hash, countLines(bytes, needle, max));
      // A process that searches again (the resident afs) keeps what fits, as view() would.
      if (this.cache.wants(bytes.byteLength)) this.cache.set(hash, bytes.toString("latin1"));
    });
    return out;
  }

  private warmLater(hash: Hash): void {
    this.toWarm.add(hash);
    this.warming ??= this.warmQueued().finally(() => {
      this.warming = undefined;
    });
  }

  private async warmQueued(): Promise<void> {
    for (const hash of this.toWarm) {
      // One text per turn of the event loop, so a request that came in meanwhile is answered first;
      // unref'd: a process with nothing else to do leaves rather than warm a cache it will not use.
      await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
      this.toWarm.delete(hash);
      try {
        await this.view(hash);
      } catch {
        // Closed (or the blob went away): warming is only ever a head start.
        this.toWarm.clear();
      }
    }
  }

  /** Resolves once the texts queued for the background are in memory (nothing waits for it but tests). */
  warmed(): Promise<void> {
    return this.warming ?? Promise.resolve();
  }

  async status(): Promise<TextIndexStatus> {
    const status: TextIndexStatus = { texts: 0, binary: 0, large: 0, bytes: 0 };
    for (const row of this.st.status.all() as { state: State; n: number; bytes: number }[]) {
      if (row.state === State.Text) status.texts = row.n;
      else if (row.state === State.Binary) status.binary = row.n;
      else status.large = row.n;
      status.bytes += row.bytes;
    }
    const building = this.building();
    if (building) status.building = building;
    return status;
  }

  /** Most blobs a search indexes itself before it answers (see SqliteTextIndexOptions.syncLimit). */
  syncLimitOf(): number {
    return this.syncLimit;
  }

  /** The background builder at work (its process alive), or undefined. */
  building(): BuilderProgress | undefined {
    const row = this.st.builder.get() as BuilderProgress | undefined;
    return row && processAlive(row.pid) ? row : undefined;
  }

  /**
   * Claims the builder's place for process `pid`; false when another live process holds it. A
   * place whose process died (killed mid-build) is taken over: the index is resumed, not restarted,
   * as every blob indexed before is kept.
   */
  claimBuilder(pid: number): boolean {
    return this.st.db
      .transaction(() => {
        const row = this.st.builder.get() as BuilderProgress | undefined;
        if (row && row.pid !== pid && processAlive(row.pid)) return false;
        const now = Date.now();
        this.st.claim.run(pid, now, now);
        return true;
      })
      .immediate();
  }

  reportBuilder(pid: number, progress: Pick<BuilderProgress, "done" | "total" | "indexed">): void {
    this.st.report.run(Date.now(), progress.done, progress.total, progress.indexed, pid);
  }

  releaseBuilder(pid: number): void {
    this.st.release.run(pid);
  }

  async clear(): Promise<void> {
    const st = this.st;
    st.db
      .transaction(() => {
        st.db.exec(`DELETE FROM text_blobs;
          DELETE FROM text_blooms;
          DELETE FROM text_bands;
          DELETE FROM text_scopes;
          DELETE FROM text_tree_files;
          DELETE FROM text_trees;`);
        st.postings.clear();
        st.bump.run();
      })
      .immediate();
    this.forget();
  }

  /** Drops every id held in memory (they may name other blobs now), and the scopes built on them. */
  private forget(): void {
    this.known.clear();
    this.ids.clear();
    this.epoch++;
  }

  async prune(keep: (hash: Hash) => boolean): Promise<number> {
    const st = this.st;
    // A pruned row's id stays in the posting lists (merges copy them as they are), naming nothing:
    // ids are never handed out twice. A pruning bumps the generation like clear(): every process
    // forgets the rows it holds, as it would still believe a pruned blob indexed.
    // IMMEDIATE: no writer indexes between reading the rows and deleting them.
    const pruned = st.db
      .transaction(() => {
        const gone: number[] = [];
        for (const row of st.rows.iterate() as Iterable<{ id: number; hash: Hash }>) {
          if (!keep(row.hash)) gone.push(row.id);
        }
        for (let i = 0; i < gone.length; i += LOOKUP_CHUNK) {
          const ids = JSON.stringify(gone.slice(i, i + LOOKUP_CHUNK));
          st.deleteBlooms.run(ids);
          st.deleteBlobs.run(ids);
        }
        for (const id of gone) st.deleteBands.run(id * BANDS, id * BANDS + BANDS - 1);
        if (gone.length > 0) {
          st.db.exec("DELETE FROM text_scopes; DELETE FROM text_tree_files; DELETE FROM text_trees");
          st.bump.run();
        }
        return gone.length;
      })
      .immediate();
    return pruned;
  }

  /** The blocks of a text whose filters may satisfy the query of `probes`. */
  private blocksMatching(k: Known, probes: ProbeTree): number[] {
    let filters = this.blooms.get(k.id) ?? (k.blocks >= TRANSPOSE_MIN_BLOCKS ? this.loadBands(k, probes) : undefined);
    if (filters?.bandsToLoad(probes).length) filters = this.loadBands(k, probes, filters);
    if (!filters) {
      const row = this.st.blooms.get(k.id) as Buffer | undefined;
      // No filters (another writer's row in flight), or filters of another size: every block may match.
      if (!row || row.length !== k.blocks * BLOOM_BYTES) return Array.from({ length: k.blocks }, (_, b) => b);
      // The row is a fresh buffer of its own: viewed, not copied.
      filters = new BlockFilters(new Uint8Array(row.buffer, row.byteOffset, row.length), k.blocks);
      this.blooms.set(k.id, filters);
    }
    return filters.matching(probes);
  }

  /**
   * `filters` (or new banded ones) with the bands `probes` need read from text_bands; undefined when
   * they are not all there (a row in flight): every block then may match.
   */
  private loadBands(k: Known, probes: ProbeTree, filters = BlockFilters.banded(k.blocks)): BlockFilters | undefined {
    const need = filters.bandsToLoad(probes);
    const rows = this.st.bands.all(JSON.stringify(need.map((j) => k.id * BANDS + j))) as {
      key: number;
      bits: Buffer;
    }[];
    if (rows.length !== need.length) return undefined;
    for (const { key, bits } of rows) {
      if (bits.length !== filters.bandBytes) return undefined;
      // A fresh buffer of its own, viewed as words when aligned (it is, as allocated).
      const words = bits.byteOffset % 4 === 0 ? bits : Buffer.from(bits);
      filters.addBand(key - k.id * BANDS, new Uint32Array(words.buffer, words.byteOffset, words.length / 4));
    }
    this.blooms.set(k.id, filters);
    return filters;
  }

  /** Row ids are reused after a clear or prune (here or in another process): then what `known` holds is void. */
  private checkGeneration(): void {
    const generation = this.st.generation.get() as number;
    if (generation !== this.generation) {
      this.forget();
      this.blooms = bloomCache();
      this.generation = generation;
    }
  }

  /** The distinct hashes not in memory yet (usually none: a search in a warm process). */
  private unknown(hashes: Iterable<Hash>): Hash[] {
    const out = new Set<Hash>();
    for (const h of hashes) if (!this.known.has(h)) out.add(h);
    return [...out];
  }

  /** Fills `known` for these hashes from the database; returns those not indexed yet. */
  private lookup(unknown: readonly Hash[]): Hash[] {
    this.remember(unknown, this.st.lookup);
    return unknown.filter((h) => !this.known.has(h));
  }

  /** Fills `known` and `ids` with the rows `statement` finds for these keys (hashes or row ids), a batch at a time. */
  private remember(keys: readonly (Hash | number)[], statement: TextIndexStatements["lookup"]): void {
    if (keys.length === 0) return;
    if (this.known.size + keys.length > MAX_KNOWN) this.forget();
    for (let i = 0; i < keys.length; i += LOOKUP_CHUNK) {
      const batch = JSON.stringify(keys.slice(i, i + LOOKUP_CHUNK));
      for (const row of statement.all(batch) as (Known & { hash: Hash })[]) {
        this.known.set(row.hash, { id: row.id, state: row.state, blocks: row.blocks });
        this.ids.set(row.id, row.hash);
      }
    }
  }

  /** Reads, decodes and indexes these blobs, in transactions of about BATCH_BYTES. */
  private async indexMissing(missing: readonly Hash[], options: BuildOptions = {}): Promise<TextIndexBuild> {
    const result: TextIndexBuild = { indexed: 0, bytes: 0, skipped: 0 };
    let batch: Pending[] = [];
    let batchBytes = 0;
    const flush = () => {
      this.write(batch, result, options.keep !== false);
      options.onProgress?.(result.indexed, missing.length);
      batch = [];
      batchBytes = 0;
    };
    const sizeOf = (hash: Hash) => options.sizes?.get(hash);
    for await (const pending of readPendings(this.store, missing, sizeOf, this.maxIndexBytes)) {
      batch.push(pending);
      batchBytes += pending.data.length;
      if (batchBytes >= BATCH_BYTES) flush();
    }
    if (batch.length > 0) flush();
    return result;
  }

  private fetchOne(hash: Hash): Known | undefined {
    const row = this.st.one.get(hash) as Known | undefined;
    if (row) this.known.set(hash, row);
    return row;
  }

  /** One transaction: each blob's row, and its trigrams unless another writer got there first. */
  private write(batch: readonly Pending[], result: TextIndexBuild, keep: boolean): void {
    // Each text's keys are made as its row goes in, inside the transaction, and go straight into
    // the batch's lists: no text's keys are held beside the batch, and a row another writer got to
    // first is not tokenized at all. The write lock is held longer by the tokenizing.
    const st = this.st;
    st.db
      .transaction(() => {
        const base = st.postings.reserve(batch.length);
        const postings = new PostingsBuilder();
        batch.forEach((pending, i) => {
          const head = rowHead(pending, this.maxIndexBytes);
          const row = this.insertRow(base + i, pending, head, result, keep, () => textRow(pending, head));
          if (row) postings.add(i, row.keys);
          if (postings.postings >= PART_POSTINGS) st.postings.write(base, postings.finish());
        });
        st.postings.write(base, postings.finish());
      })
      .immediate();
    // The texts just indexed are what the search is about to verify.
    if (keep)
      for (const { hash, data, text } of batch) if (text !== null) this.cache.set(hash, data.toString("latin1"));
  }

  /**
   * The hashes of these not indexed yet (distinct), looked up and then forgotten, as a builder's
   * batch is: what the builder hands to its worker thread (see insertRows).
   */
  missing(hashes: Iterable<Hash>): Hash[] {
    this.checkGeneration();
    const missing = this.lookup(this.unknown(hashes));
    this.forget();
    return missing;
  }

  /**
   * Writes rows made elsewhere (textRow, in the builder's worker thread) and their batch's posting
   * lists (made there too, with the rows' places in `rows`) in one transaction, as build() writes
   * those it makes; a row another writer got to first is skipped (its id, in the lists, names
   * nothing). Nothing of them stays in memory.
   */
  insertRows(rows: readonly TextRow[], postings: readonly EncodedPostings[]): TextIndexBuild {
    const result: TextIndexBuild = { indexed: 0, bytes: 0, skipped: 0 };
    const st = this.st;
    st.db
      .transaction(() => {
        const base = st.postings.reserve(rows.length);
        rows.forEach((row, i) => {
          this.insertRow(base + i, row, row, result, false, () => row);
        });
        for (const part of postings) st.postings.write(base, part);
      })
      .immediate();
    return result;
  }

  /** Blob `id`'s row, then (unless another writer got there first) its filters from `made`: the text's row when written. */
  private insertRow(
    id: number,
    blob: Pick<Pending, "hash" | "size">,
    head: Pick<RowHead, "state" | "blocks">,
    result: TextIndexBuild,
    keep: boolean,
    made: () => TextRow,
  ): TextRow | undefined {
    const { hash, size } = blob;
    const { state, blocks } = head;
    const inserted = this.st.insertBlob.run(id, hash, state, size, blocks);
    if (inserted.changes === 0) {
      if (keep) this.fetchOne(hash);
      return undefined;
    }
    let row: TextRow | undefined;
    if (state === State.Text) {
      row = made();
      if (row.lines) this.st.insertBlooms.run(id, row.blooms ?? EMPTY, row.lines);
      row.bands?.forEach((bits, j) => {
        this.st.insertBand.run(id * BANDS + j, bits);
      });
    }
    if (keep) this.known.set(hash, { id, state, blocks });
    result.indexed++;
    result.bytes += size;
    if (state !== State.Text) result.skipped++;
    return row;
  }

  private async blob(hash: Hash): Promise<Buffer> {
    if (hash === EMPTY_SHA256) return Buffer.alloc(0);
    const data = await this.store.getBlob(hash);
    if (!data) throw new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`);
    return data;
  }
}

/** Whether process `pid` is alive (on this machine: the index file is each machine's own). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: alive, another user's.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

// Weighed by the stored filters' size (fixed, as the cache needs; transposed they hold at most ~1.5x that).
const bloomCache = () => new WeightedLru<number, BlockFilters>(64 * 1024 * 1024, (f) => f.blocks * BLOOM_BYTES);

/** A scope's name in text_scopes: its hashes, in the order the search passed them. */
const scopeDigest = (hashes: readonly Hash[]): string => sha256(hashes.join("\n"));

/** What the posting lists must hold for a query, or null when it requires nothing (every text matches). */
function postingQuery(query: LiteralQuery): PostingQuery | null {
  switch (query.op) {
    case "all":
      return null;
    case "lit": {
      const keys = literalKeys(query.folded);
      return keys.length === 0 ? null : keys.length === 1 ? (keys[0] as number) : { and: keys };
    }
    case "and": {
      const parts = query.of.map(postingQuery).filter((p): p is PostingQuery => p !== null);
      return parts.length === 0 ? null : parts.length === 1 ? (parts[0] as PostingQuery) : { and: parts };
    }
    case "or": {
      const parts = query.of.map(postingQuery);
      if (parts.length === 0 || parts.includes(null)) return null;
      return parts.length === 1 ? (parts[0] as PostingQuery) : { or: parts as PostingQuery[] };
    }
  }
}
