// The afs engine as one object: open a home, then manage workspaces, checkpoints and volumes.
// Every surface (CLI, MCP, ACP, HTTP) talks to this facade and the ops, never to the store.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { userInfo } from "node:os";
import { AfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { KeyedLock } from "../core/keyed-lock.js";
import { type Env, readSettings, type Settings } from "../core/settings.js";
import { ChunkIndex } from "../search/chunk-index.js";
import { embedderFrom } from "../search/embedder.js";
import type { EmbeddingProviders } from "../search/embeddings/open.js";
import { IndexDb, indexDbPath } from "../store/index-db.js";
import { makeDirectory } from "../store/make-dir.js";
import { openStore } from "../store/open.js";
import { SqliteChunkStore } from "../store/search/chunk-store-sqlite.js";
import { SqliteTextIndex } from "../store/search/text-index-sqlite.js";
import { SqliteVectorStore } from "../store/search/vector-store-sqlite.js";
import type { CheckpointRecord, Store, WorkspaceRecord } from "../store/store.js";
import { maskStoreUrl } from "../store/url.js";
import type { AttachedVolume } from "./attached-volume.js";
import { attachments, realDirectory, setAttachment, workspaceNameFor } from "./attachments.js";
import { BlobCache } from "./blob-cache.js";
import {
  type CreateCheckpointOptions,
  createCheckpoint,
  deleteCheckpoint,
  getCheckpoint,
  keepRoot,
  listCheckpoints,
  restoreCheckpoint,
} from "./checkpoints.js";
import { locate, readConfig, writeConfig } from "./config.js";
import {
  type CheckpointInfo,
  checkpointInfo,
  type EngineContext,
  snapshot,
  type WorkspaceInfo,
  workspaceInfo,
} from "./context.js";
import type { Change, DiffSummary } from "./diff.js";
import { fold } from "./fold.js";
import type { IndexPruned } from "./gc.js";
import { SubtreeListings } from "./listings.js";
import { checkName } from "./names.js";
import type { RecordOptions, RecordResult, VerifiedStats } from "./record.js";
import { notFoundWorkspace } from "./snapshot.js";
import { findWorkspace, setTemplate, templateSlugs, templateSource } from "./templates.js";
import type { ImportOptions, Progress, SkippedFile } from "./transfer.js";
import { EMPTY_TREE, EMPTY_TREE_DATA, TreeReader, TreeWriter } from "./tree.js";
import { VERSION } from "./version.js";
import { WorkspaceVolume } from "./workspace-volume.js";

export { VERSION };

export interface AfsOptions {
  /** Data directory; default AFS_HOME or ~/.afs. */
  home?: string;
  /** Store URL; default AFS_STORE or sqlite:<home>/afs.db. */
  store?: string;
  /** Recorded on events and checkpoints; default AFS_ACTOR, else the OS user. */
  actor?: string;
  /** Where the AFS_* settings come from, read once here; default this process's environment. */
  env?: Env;
  /** The directory a relative home or SQLite store path is taken from; default this process's. */
  cwd?: string;
}

export interface DiffResult {
  workspace: string;
  base: string;
  target: string;
  summary: DiffSummary;
  changes: Change[];
}

export interface AttachResult {
  workspace: string;
  /** The directory's real path. */
  dir: string;
  /** True when the workspace was created from the directory. */
  created: boolean;
  /** What recording the directory into an existing workspace found (null when just created). */
  record: RecordResult | null;
}

export interface ExportResult {
  files: number;
  bytes: number;
  /** With force: files and symlinks written, and entries removed. */
  written?: number;
  removed?: number;
  /** With force: the checkpoint that keeps what the directory held (null: a checkpoint already had it). */
  safety?: CheckpointInfo | null;
}

export class Afs {
  private readonly ctx: EngineContext;
  /**
   * Shared by every volume of this home: walk listings of unchanged subtrees, and small contents
   * recently read (both keyed by hash, so never stale).
   */
  private readonly caches = { listings: new SubtreeListings(), blobs: new BlobCache(), writers: new KeyedLock() };
  /** Stats of attached files read and found unchanged, so records need not read them again. */
  private verified: VerifiedStats | undefined;
  private indexDb: IndexDb | undefined;
  /** Embedding providers query opened for this engine (loaded on first use: costly to import). */
  private embeddings: Promise<EmbeddingProviders> | undefined;
  private chunkIndex: ChunkIndex | undefined;
  private contentIndex: SqliteTextIndex | undefined;

  private constructor(
    readonly home: string,
    readonly store: Store,
    actor: string,
    /** What this engine read from its environment when it opened; nothing below reads process.env. */
    readonly settings: Settings,
  ) {
    this.ctx = { store, trees: new TreeReader(store), roots: new Map(), actor };
  }

  static async open(options: AfsOptions = {}): Promise<Afs> {
    // The library's default: the one place below the CLI that reads this process's environment.
    const settings = readSettings(options.env ?? process.env);
    const { home, store: url } = locate(settings, options.cwd ?? process.cwd(), options);
    const store = await openStore(url, { env: settings.env });
    // Every new directory points at the empty tree; keeping it stored makes that always valid.
    await store.putTrees([{ hash: EMPTY_TREE, data: EMPTY_TREE_DATA }]);
    return new Afs(home, store, options.actor ?? settings.actor ?? safeUser(), settings);
  }

  async close(): Promise<void> {
    await this.chunkIndex?.close();
    this.indexDb?.close();
    return this.store.close();
  }

  /** The search indexes' file (derived data keyed by content hash), opened on first use. */
  get searchDb(): IndexDb {
    this.indexDb ??= IndexDb.open(indexDbPath(this.store.url, this.home));
    return this.indexDb;
  }

  /** Ranked search's index (chunks, BM25, vectors; keyed by content hash), shared by every workspace. */
  get queryIndex(): ChunkIndex {
    this.chunkIndex ??= new ChunkIndex({
      chunks: new SqliteChunkStore(() => this.searchDb),
      vectors: new SqliteVectorStore(() => this.searchDb),
      // Empty files are never stored as blobs.
      read: async (hash) => (hash === EMPTY_SHA256 ? Buffer.alloc(0) : this.store.getBlob(hash)),
      // Snippets come from the files grep also reads: share its bounded cache of decoded text.
      text: (hash) => this.textIndex.text(hash),
      embedder: () =>
        embedderFrom(this.settings.env, () => {
          this.embeddings ??= import("../search/embeddings/open.js").then((m) => new m.EmbeddingProviders());
          return this.embeddings;
        }),
      release: async () => (await this.embeddings)?.close(),
    });
    return this.chunkIndex;
  }

  /** grep's content index (trigrams keyed by content hash) and text cache, shared by every workspace. */
  get textIndex(): SqliteTextIndex {
    this.contentIndex ??= new SqliteTextIndex(() => this.searchDb, this.store, {
      cacheUnits: this.settings.textCacheBytes,
    });
    return this.contentIndex;
  }

  // --- the current workspace -------------------------------------------------------------

  async currentWorkspace(): Promise<string | null> {
    return (await readConfig(this.home)).current_workspace ?? null;
  }

  async useWorkspace(name: string): Promise<WorkspaceInfo> {
    const info = await this.getWorkspace(name);
    await writeConfig(this.home, { ...(await readConfig(this.home)), current_workspace: name });
    return info;
  }

  /** The named workspace, else the current one, else a clear error saying how to pick one. */
  async resolveWorkspace(name?: string): Promise<string> {
    const chosen = name ?? this.settings.workspace ?? (await this.currentWorkspace());
    if (!chosen) {
      throw new AfsError("INVALID_ARGUMENT", "no workspace given; pass -w NAME or choose one with: afs ws use NAME");
    }
    return chosen;
  }

  // --- workspaces --------------------------------------------------------------------------

  /**
   * An empty workspace, or with `template` one that starts at O(1) from that template's head
   * checkpoint, like a fork: same tree, a `fork` checkpoint naming the template as its start.
   */
  async createWorkspace(
    name: string,
    options: { description?: string; template?: string } = {},
  ): Promise<WorkspaceInfo> {
    if (options.template === undefined) {
      return this.createWithRoot(name, EMPTY_TREE, { kind: "initial", parent: null, description: options.description });
    }
    checkName("workspace", name);
    const source = await templateSource(this.ctx, options.template);
    const origin = `from template ${options.template} (workspace ${source.workspace}, checkpoint ${source.head.name})`;
    return this.createWithRoot(name, source.head.root, {
      kind: "fork",
      parent: source.head.id,
      description: origin,
      workspaceDescription: options.description ?? origin,
    });
  }

  async listWorkspaces(): Promise<WorkspaceInfo[]> {
    const [all, templates] = await Promise.all([this.store.listWorkspaces(), templateSlugs(this.ctx)]);
    return Promise.all(all.map((ws) => workspaceInfo(this.ctx, ws, templates.get(ws.name) ?? null)));
  }

  async getWorkspace(name: string): Promise<WorkspaceInfo> {
    return this.describe(await this.requireWorkspace(name));
  }

  /** A workspace named by its name or its id (the hosted control plane takes either). */
  async findWorkspace(ref: string): Promise<WorkspaceInfo> {
    return this.describe(await findWorkspace(this.ctx, ref));
  }

  /** Offers a workspace as a template under `slug` (replacing any slug it had), or withdraws it (null). */
  async setTemplate(name: string, slug: string | null): Promise<WorkspaceInfo> {
    await setTemplate(this.ctx, name, slug);
    return this.getWorkspace(name);
  }

  /** A new workspace starting from the source's live state (its uncommitted changes included). */
  async forkWorkspace(source: string, name: string, options: { description?: string } = {}): Promise<WorkspaceInfo> {
    checkName("workspace", name);
    const { root, head } = await this.liveRoot(source);
    return this.createWithRoot(name, root, {
      kind: "fork",
      parent: head,
      description: options.description ?? `fork of ${source}`,
    });
  }

  async deleteWorkspace(name: string): Promise<void> {
    if (!(await this.store.deleteWorkspace(name))) throw notFoundWorkspace(name);
    if ((await attachments(this.home))[name]) await setAttachment(this.home, name, null);
    if ((await this.currentWorkspace()) === name) {
      const { current_workspace: _, ...rest } = await readConfig(this.home);
      await writeConfig(this.home, rest);
    }
  }

  async importDirectory(
    name: string,
    dir: string,
    options: { description?: string } & ImportOptions = {},
  ): Promise<{ workspace: WorkspaceInfo; files: number; bytes: number; skipped: SkippedFile[] }> {
    checkName("workspace", name);
    if (await this.store.getWorkspace(name)) throw alreadyExists(name);
    const { importTree } = await import("./transfer.js");
    const imported = await importTree(this.store, dir, options, this.settings.env);
    const workspace = await this.createWithRoot(name, imported.root, {
      kind: "import",
      parent: null,
      description: options.description ?? `imported from ${dir}`,
    });
    return { workspace, files: imported.files, bytes: imported.bytes, skipped: imported.skipped };
  }

  /**
   * Exports a checkpoint (or, without one, the live state) into an empty directory. With `force`
   * the directory may hold anything: what it holds is first kept as a safety checkpoint (when no
   * checkpoint has it yet), then it is made equal to the export (ignored files stay). On the
   * workspace's attached directory that is an undo: the checkpoint becomes the live state too.
   */
  async exportWorkspace(
    name: string,
    dir: string,
    options: { checkpoint?: string; force?: boolean; onProgress?: Progress } = {},
  ): Promise<ExportResult> {
    if (!options.force) {
      const root = options.checkpoint
        ? (await getCheckpoint(this.ctx, name, options.checkpoint)).root
        : (await this.liveRoot(name)).root;
      const { exportTree } = await import("./transfer.js");
      return exportTree(this.store, this.ctx.trees, root, dir, options.onProgress);
    }
    const target = options.checkpoint ? await getCheckpoint(this.ctx, name, options.checkpoint) : null;
    makeDirectory(dir, "the export");
    const real = await realDirectory(dir);
    const attached = (await this.attachedDirectory(name)) === real;
    const what = target ? `checkpoint ${target.name}` : "the live state";
    let safety: CheckpointInfo | null = null;
    if (attached) {
      await this.recordDirectory(name);
      const saved = await this.createCheckpoint(name, {
        kind: "safety",
        description: `${real} before exporting ${what}`,
      });
      if (saved.created) safety = saved.checkpoint;
    } else {
      safety = await this.keepDirectory(name, real, `${real} before exporting ${what}`);
    }
    const root = target?.root ?? (await this.liveRoot(name)).root;
    const { syncTree } = await import("./sync-dir.js");
    const synced = await syncTree(this.store, this.ctx.trees, root, real);
    if (attached && target) await this.restoreCheckpoint(name, target.name);
    return { files: synced.files, bytes: synced.bytes, written: synced.written, removed: synced.removed, safety };
  }

  /** Records what a directory holds as a safety checkpoint of `name`, head unmoved (null: nothing to keep). */
  private async keepDirectory(name: string, dir: string, description: string): Promise<CheckpointInfo | null> {
    const { importTree } = await import("./transfer.js");
    const { root } = await importTree(this.store, dir, {}, this.settings.env);
    return root === EMPTY_TREE ? null : keepRoot(this.ctx, name, root, description);
  }

  /**
   * The workspace as a Volume. An attached workspace's volume is its directory: reads and writes
   * go to disk and are recorded into the workspace; files still as recorded report their hash.
   */
  async volume(name: string, actor = this.ctx.actor): Promise<WorkspaceVolume | AttachedVolume> {
    await this.requireWorkspace(name);
    const indexes = { queryIndex: this.queryIndex, textIndex: this.textIndex };
    const live = new WorkspaceVolume(this.store, this.ctx.trees, this.ctx.roots, this.caches, name, actor, indexes);
    const dir = await this.attachedDirectory(name);
    if (!dir) return live;
    // Only attached workspaces need the directory machinery; a read of a stored one loads none of it.
    const [{ AttachedVolume }, { LocalDirVolume }, { verified }] = await Promise.all([
      import("./attached-volume.js"),
      import("../volume/local-dir/local-dir-volume.js"),
      this.recording(),
    ]);
    return new AttachedVolume(name, dir, new LocalDirVolume(dir, { actor }), {
      live,
      record: (paths) => this.recordDirectory(name, { paths }),
      updatedAt: async () => (await this.requireWorkspace(name)).updatedAt,
      verified,
      ...indexes,
    });
  }

  // --- attached directories ----------------------------------------------------------------

  /**
   * Attaches a directory to a workspace, whose live state then *is* the directory. On first use the
   * workspace (named after the directory unless `workspace` is given) is created from it; when it is
   * already attached, the directory is recorded into it. An existing workspace that is not attached
   * is only taken with `adopt` (a dirty live state is kept as a safety checkpoint first).
   */
  async attachDirectory(
    dir: string,
    options: { workspace?: string; description?: string; adopt?: boolean } = {},
  ): Promise<AttachResult> {
    const real = await realDirectory(dir);
    const links = await attachments(this.home);
    const holder = Object.keys(links).find((ws) => links[ws] === real);
    const name = checkName("workspace", options.workspace ?? holder ?? workspaceNameFor(real));
    if (holder && holder !== name) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${real} is attached to workspace ${holder}; use that workspace, or detach it first`,
        { dir: real, workspace: holder },
      );
    }
    const linked = links[name];
    if (linked && linked !== real) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `workspace ${name} is attached to ${linked}; choose another workspace name for ${real}`,
        { workspace: name, dir: linked },
      );
    }
    const exists = (await this.store.getWorkspace(name)) !== null;
    if (!exists) {
      await this.importDirectory(name, real, { description: options.description ?? `attached to ${real}` });
      await setAttachment(this.home, name, real);
      return { workspace: name, dir: real, created: true, record: null };
    }
    if (!linked) {
      if (!options.adopt) {
        throw new AfsError(
          "ALREADY_EXISTS",
          `workspace ${name} already exists and is not attached to a directory; choose another workspace name for ${real}, or adopt it (afs acp --adopt; its live state becomes the directory)`,
          { workspace: name, dir: real },
        );
      }
      if ((await this.store.overlayCount(name)) > 0) {
        await this.createCheckpoint(name, { kind: "safety", description: `live state before attaching ${real}` });
      }
      await setAttachment(this.home, name, real);
    }
    return { workspace: name, dir: real, created: false, record: await this.recordDirectory(name) };
  }

  /** The directory attached to a workspace, or null. */
  async attachedDirectory(name: string): Promise<string | null> {
    return (await attachments(this.home))[name] ?? null;
  }

  /** Unlinks a workspace from its directory (both stay as they are); false when it was not attached. */
  detachDirectory(name: string): Promise<boolean> {
    return setAttachment(this.home, name, null);
  }

  /**
   * Brings an attached workspace's live state to exactly what its directory holds (only `paths`
   * when given: a watcher's changes), as one commit; nothing changed, nothing committed.
   */
  async recordDirectory(name: string, options: RecordOptions = {}): Promise<RecordResult> {
    const { record, verified } = await this.recording();
    return record.recordDirectory(this.ctx, name, await this.requireAttached(name), verified, options);
  }

  /** Recording's module and the stats it shares with attached volumes, loaded on first use. */
  private async recording(): Promise<{ record: typeof import("./record.js"); verified: VerifiedStats }> {
    const record = await import("./record.js");
    this.verified ??= new record.VerifiedStats();
    return { record, verified: this.verified };
  }

  // --- checkpoints -------------------------------------------------------------------------

  createCheckpoint(workspace: string, options?: CreateCheckpointOptions) {
    return createCheckpoint(this.ctx, workspace, options);
  }

  listCheckpoints(workspace: string) {
    return listCheckpoints(this.ctx, workspace);
  }

  async getCheckpoint(workspace: string, name: string) {
    return checkpointInfo(await getCheckpoint(this.ctx, workspace, name));
  }

  restoreCheckpoint(workspace: string, name: string) {
    return restoreCheckpoint(this.ctx, workspace, name);
  }

  deleteCheckpoint(workspace: string, name: string) {
    return deleteCheckpoint(this.ctx, workspace, name);
  }

  /** Changes from checkpoint `base` to checkpoint `target`, or to the live state when omitted. */
  async diff(workspace: string, base: string, target?: string): Promise<DiffResult> {
    const from = await getCheckpoint(this.ctx, workspace, base);
    const to = target ? (await getCheckpoint(this.ctx, workspace, target)).root : (await this.liveRoot(workspace)).root;
    const { diffTrees, summarize } = await import("./diff.js");
    const changes = await diffTrees(this.store, this.ctx.trees, from.root, to);
    return { workspace, base, target: target ?? "live", summary: summarize(changes), changes };
  }

  // --- maintenance -------------------------------------------------------------------------

  /**
   * Deletes what nothing uses, and the search index rows of blobs gone from the store; with
   * `repack`, then re-encodes what is left that was stored in an older format (Store.repack),
   * after the sweep so no time goes on values about to be deleted.
   */
  async gc(options: { graceMs?: number; repack?: boolean } = {}) {
    const { collectGarbage, DEFAULT_GC_GRACE_MS } = await import("./gc.js");
    const result = await collectGarbage(this.store, this.ctx.trees, options.graceMs ?? DEFAULT_GC_GRACE_MS, (deleted) =>
      this.pruneIndexes(deleted),
    );
    if (options.repack) result.repacked = await this.store.repack();
    return result;
  }

  /** Drops the index rows of blobs gc deleted; no index file, no work. */
  private async pruneIndexes(deleted: ReadonlySet<Hash>): Promise<IndexPruned | undefined> {
    if (!this.indexDb && !existsSync(indexDbPath(this.store.url, this.home))) return undefined;
    const keep = (hash: Hash): boolean => !deleted.has(hash);
    const text_blobs = await this.textIndex.prune(keep);
    const query = await this.queryIndex.prune(keep);
    return { text_blobs, query_blobs: query.blobs, chunks: query.chunks, vectors: query.vectors };
  }

  async fsck() {
    const { checkStore } = await import("./gc.js");
    return checkStore(this.store, this.ctx.trees);
  }

  async status() {
    const workspaces = await this.store.listWorkspaces();
    return {
      version: VERSION,
      home: this.home,
      // A password in the URL (redis://user:pass@…) is never shown.
      store: maskStoreUrl(this.store.url),
      current_workspace: await this.currentWorkspace(),
      workspaces: workspaces.length,
    };
  }

  // --- internals ---------------------------------------------------------------------------

  private async requireAttached(name: string): Promise<string> {
    const dir = await this.attachedDirectory(name);
    if (!dir) {
      await this.requireWorkspace(name);
      throw new AfsError("INVALID_ARGUMENT", `workspace ${name} is not attached to a directory; attach one first`, {
        workspace: name,
      });
    }
    return dir;
  }

  private async describe(ws: WorkspaceRecord): Promise<WorkspaceInfo> {
    return workspaceInfo(this.ctx, ws, (await templateSlugs(this.ctx)).get(ws.name) ?? null);
  }

  private async requireWorkspace(name: string): Promise<WorkspaceRecord> {
    const ws = await this.store.getWorkspace(name);
    if (!ws) throw notFoundWorkspace(name);
    return ws;
  }

  /** The live state folded into trees (stored, unreferenced until a checkpoint uses them). */
  private async liveRoot(name: string): Promise<{ root: Hash; head: string }> {
    for (;;) {
      const snap = await snapshot(this.ctx, name);
      const rows = await this.store.overlayUnder(name, "/");
      const writer = new TreeWriter();
      const root = await fold(snap.root, rows, this.ctx.trees, writer);
      await writer.flush(this.store);
      if (await snap.stillCurrent()) return { root, head: snap.workspace.head };
    }
  }

  private async createWithRoot(
    name: string,
    root: Hash,
    from: {
      kind: CheckpointRecord["kind"];
      parent: string | null;
      description?: string | undefined;
      /** The workspace's own description when it differs from its first checkpoint's. */
      workspaceDescription?: string;
    },
  ): Promise<WorkspaceInfo> {
    checkName("workspace", name);
    const now = Date.now();
    const checkpoint: CheckpointRecord = {
      id: randomUUID(),
      workspace: name,
      name: from.kind,
      root,
      parent: from.parent,
      createdAt: now,
      actor: this.ctx.actor,
      kind: from.kind,
      description: from.description ?? "",
    };
    const ws: WorkspaceRecord = {
      name,
      description: from.workspaceDescription ?? from.description ?? "",
      head: checkpoint.id,
      revision: 0,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.store.createWorkspace(ws, checkpoint);
    } catch (e) {
      if (e instanceof AfsError && e.code === "ALREADY_EXISTS") throw alreadyExists(name);
      throw e;
    }
    // A new workspace is never a template yet.
    return workspaceInfo(this.ctx, ws, null);
  }
}

const alreadyExists = (name: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `workspace ${name} already exists; pick another name or delete it first`, {
    workspace: name,
  });

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "unknown";
  }
}
