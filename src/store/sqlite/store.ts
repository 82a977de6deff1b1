// The embedded Store: one SQLite file in WAL mode that every afs process on a machine can share.
// Each commit and head move is one BEGIN IMMEDIATE transaction, so the revision check and the
// writes it guards never interleave with another connection's.
import { dirname, resolve } from "node:path";
import type Database from "better-sqlite3";
import type { Entry, EntryKind } from "../../core/entry.js";
import { AfsError, type ErrorCode } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import { parentOf } from "../../core/paths.js";
import type { ApprovalRecord } from "../approvals.js";
import type { StoreDriver } from "../checked-store.js";
import { type ByteRange, toBuffer } from "../chunking.js";
import { pollEvents } from "../follow.js";
import { makeDirectory } from "../make-dir.js";
import { type OnRepackProgress, type RepackResult, repackValues } from "../repack.js";
import type {
  CheckpointRecord,
  Commit,
  EventFollower,
  EventInput,
  EventRecord,
  HeadMove,
  NewBlob,
  OverlayRow,
  TemplateRecord,
  WorkspaceDump,
  WorkspaceRecord,
} from "../store.js";
import {
  checkpointIdTaken,
  checkpointNameTaken,
  deletingHead,
  noSuchHead,
  noWorkspace,
  revisionMoved,
  workspaceExists,
} from "../store-errors.js";
import type { TokenRecord } from "../tokens.js";
import { approvalStatements } from "./approvals.js";
import { SqliteBlobs } from "./blobs.js";
import { openDatabase, Sqlite } from "./driver.js";
import { sqliteRepackTargets } from "./repack.js";
import { migrate } from "./schema.js";
import { type ObjectInfo, type ObjectKind, type OverlayDbRow, prepare, type Statements } from "./statements.js";
import { templateStatements } from "./templates.js";
import { tokenStatements } from "./tokens.js";
import { useWal } from "./wal.js";
import { watchFile } from "./watch-file.js";

export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;
/** Rows per query when listing objects, so gc never holds a statement open across an await. */
const LIST_PAGE = 1000;

/** How SQLite's result codes reach callers; the first matching prefix wins. */
const SQLITE_ERRORS: ReadonlyArray<readonly [prefix: string, code: ErrorCode, advice: string]> = [
  ["SQLITE_BUSY", "TIMEOUT", "store is busy (another process holds its write lock); retry"],
  ["SQLITE_LOCKED", "TIMEOUT", "store is busy (another connection holds a lock); retry"],
  ["SQLITE_READONLY", "PERMISSION_DENIED", "store is read-only; check the file's permissions"],
  ["SQLITE_FULL", "IO_ERROR", "the disk holding the store is full; free space and retry"],
  ["SQLITE_CORRUPT", "IO_ERROR", "store file is corrupt; run afs fsck"],
  ["SQLITE_NOTADB", "IO_ERROR", "file is not an afs store"],
  ["SQLITE_CANTOPEN", "IO_ERROR", "cannot open the store file"],
  ["SQLITE_CONSTRAINT", "INTERNAL", "store constraint violated"],
];

export interface SqliteStoreOptions {
  /** How long a write waits for another connection's lock before failing with TIMEOUT. */
  busyTimeoutMs?: number;
  /**
   * A read-only connection to a store that exists (the index builder's worker thread reads blobs
   * through one): no directory made, no WAL switch, no migration.
   */
  readonly?: boolean;
}

/** The SQLite primitives; openStore wraps them in the contract's checks (checked-store.ts). */
export class SqliteStore implements StoreDriver {
  readonly url: string;
  readonly chunkBytes: number;
  private readonly st: Statements;
  private readonly blobs: SqliteBlobs;
  private readonly commitTx: (workspace: string, commit: Commit) => number;
  private readonly moveHeadTx: (workspace: string, move: HeadMove) => number;
  private readonly createWorkspaceTx: (ws: WorkspaceRecord, initial: CheckpointRecord) => void;
  private readonly deleteCheckpointTx: (workspace: string, id: string) => boolean;
  private readonly putObjectsTx: (kind: ObjectKind, objects: ReadonlyArray<{ hash: Hash; data: Uint8Array }>) => void;
  private readonly deleteObjectsTx: (kind: ObjectKind, hashes: readonly Hash[]) => number;
  private readonly tokens: ReturnType<typeof tokenStatements>;
  private readonly approvals: ReturnType<typeof approvalStatements>;
  private readonly importWorkspaceTx: (dump: WorkspaceDump) => void;
  private readonly templates: ReturnType<typeof templateStatements>;
  private readonly setTemplateTx: (workspace: string, slug: string | null) => void;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {
    this.url = `sqlite:${path}`;
    const st = prepare(db);
    this.st = st;
    this.tokens = tokenStatements(db);
    this.approvals = approvalStatements(db);
    this.templates = templateStatements(db);
    this.blobs = new SqliteBlobs(db, (fn) => this.guard(fn));
    this.chunkBytes = this.blobs.chunkBytes;
    const immediate = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) => {
      const tx = db.transaction(fn);
      return (...args) => tx.immediate(...args);
    };

    this.commitTx = immediate((workspace: string, commit: Commit): number => {
      const revision = this.checkRevision(workspace, commit.expectRevision);
      for (const dir of commit.clearUnder ?? []) st.overlayClearUnder.run(workspace, ...below(dir));
      for (const row of commit.set) st.overlayPut.run(workspace, row.path, parentOf(row.path), ...entryColumns(row));
      const now = Date.now();
      let seq = revision;
      for (const event of commit.events) this.appendEvent(workspace, ++seq, event, now);
      st.advance.run(seq, now, workspace);
      return seq;
    });

    this.moveHeadTx = immediate((workspace: string, move: HeadMove): number => {
      const revision = this.checkRevision(workspace, move.expectRevision);
      if (move.checkpoint) this.insertCheckpoint(workspace, move.checkpoint);
      const target = st.checkpointById.get(move.head);
      if (target?.workspace !== workspace) throw noSuchHead(workspace, move.head);
      if (move.clearOverlay) st.overlayClear.run(workspace);
      const now = Date.now();
      this.appendEvent(workspace, revision + 1, move.event, now);
      st.advanceHead.run(move.head, revision + 1, now, workspace);
      return revision + 1;
    });

    this.createWorkspaceTx = immediate((ws: WorkspaceRecord, initial: CheckpointRecord): void => {
      if (st.revision.get(ws.name) !== undefined) throw workspaceExists(ws.name);
      st.insertWorkspace.run(ws.name, ws.description, ws.head, ws.revision, ws.createdAt, ws.updatedAt);
      this.insertCheckpoint(ws.name, initial);
    });

    this.importWorkspaceTx = immediate((dump: WorkspaceDump): void => {
      const ws = dump.workspace;
      if (st.revision.get(ws.name) !== undefined) throw workspaceExists(ws.name);
      st.insertWorkspace.run(ws.name, ws.description, ws.head, ws.revision, ws.createdAt, ws.updatedAt);
      for (const cp of dump.checkpoints) this.insertCheckpoint(ws.name, cp);
      for (const row of dump.overlay) st.overlayPut.run(ws.name, row.path, parentOf(row.path), ...entryColumns(row));
      for (const e of dump.events) this.appendEvent(ws.name, e.seq, e, e.time);
    });

    this.setTemplateTx = immediate((workspace: string, slug: string | null) => this.templates.set(workspace, slug));

    this.deleteCheckpointTx = immediate((workspace: string, id: string): boolean => {
      if (st.head.get(workspace) === id) throw deletingHead(workspace, id);
      return st.deleteCheckpoint.run(id, workspace).changes > 0;
    });

    this.putObjectsTx = immediate((kind: ObjectKind, objects: ReadonlyArray<{ hash: Hash; data: Uint8Array }>) => {
      const now = Date.now();
      for (const { hash, data } of objects) st[kind].put.run(hash, data.byteLength, now, toBuffer(data));
    });

    this.deleteObjectsTx = immediate((kind: ObjectKind, hashes: readonly Hash[]): number => {
      let deleted = 0;
      for (const hash of hashes) deleted += st[kind].delete.run(hash).changes;
      return deleted;
    });
  }

  /** Opens (creating if needed) the store file at `path`, migrating its schema to the newest version. */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const file = resolve(path);
    if (!options.readonly) makeDirectory(dirname(file), `the afs store ${file}`);
    let db: Database.Database | undefined;
    try {
      const timeout = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
      if (options.readonly) {
        db = openDatabase(file, { timeout, readonly: true, fileMustExist: true });
        return new SqliteStore(db, file);
      }
      db = openDatabase(file, { timeout });
      useWal(db, timeout);
      // In WAL mode NORMAL only risks the last transactions on power loss, never on a process kill.
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
      migrate(db, file);
      return new SqliteStore(db, file);
    } catch (e) {
      db?.close();
      if (e instanceof AfsError) throw e;
      const wrapped = sqliteError(e);
      if (wrapped instanceof AfsError && wrapped.code === "TIMEOUT") throw wrapped;
      const reason = e instanceof Error ? e.message : String(e);
      throw new AfsError("IO_ERROR", `cannot open the afs store at ${file}: ${reason}`, { path: file });
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  // --- objects -------------------------------------------------------------------------------

  async putBlobs(blobs: ReadonlyArray<NewBlob>): Promise<void> {
    this.blobs.put(blobs);
  }

  putBlobStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }> {
    return this.blobs.putStream(source);
  }

  getBlob(hash: Hash): Promise<Buffer | null> {
    return this.blobs.read.get(hash);
  }

  blobSize(hash: Hash): Promise<number | null> {
    return this.blobs.read.size(hash);
  }

  eachSmallBlob(hashes: readonly Hash[], max: number, visit: (hash: Hash, bytes: Buffer) => void): Promise<void> {
    return this.blobs.eachSmall(hashes, max, visit);
  }

  readBlobRanges(hash: Hash, ranges: readonly ByteRange[]): Promise<Buffer[] | null> {
    return this.blobs.read.ranges(hash, ranges);
  }

  blobStream(hash: Hash): AsyncIterable<Buffer> {
    return this.blobs.read.stream(hash);
  }

  async hasBlobs(hashes: readonly Hash[]): Promise<Set<Hash>> {
    return new Set(this.guard(() => this.st.blob.has.all(JSON.stringify(hashes))));
  }

  async putTrees(trees: ReadonlyArray<{ hash: Hash; data: Uint8Array }>): Promise<void> {
    this.guard(() => this.putObjectsTx("tree", trees));
  }

  async getTree(hash: Hash): Promise<Buffer | null> {
    return this.guard(() => this.st.tree.get.get(hash) ?? null);
  }

  // --- workspaces ----------------------------------------------------------------------------

  async createWorkspace(ws: WorkspaceRecord, initial: CheckpointRecord): Promise<void> {
    this.guard(() => this.createWorkspaceTx(ws, initial));
  }

  async getWorkspace(name: string): Promise<WorkspaceRecord | null> {
    return this.guard(() => this.st.workspace.get(name) ?? null);
  }

  async listWorkspaces(): Promise<WorkspaceRecord[]> {
    return this.guard(() => this.st.workspaces.all());
  }

  async deleteWorkspace(name: string): Promise<boolean> {
    // Checkpoints, overlay rows, events and its template mark go with it through ON DELETE CASCADE.
    return this.guard(() => this.st.deleteWorkspace.run(name).changes > 0);
  }

  async importWorkspace(dump: WorkspaceDump): Promise<void> {
    this.guard(() => this.importWorkspaceTx(dump));
  }

  async setTemplate(workspace: string, slug: string | null): Promise<void> {
    this.guard(() => this.setTemplateTx(workspace, slug));
  }

  async listTemplates(): Promise<TemplateRecord[]> {
    return this.guard(() => this.templates.list());
  }

  // --- overlay -------------------------------------------------------------------------------

  async overlayGet(workspace: string, paths: readonly string[]): Promise<Map<string, Entry | null>> {
    const rows = this.guard(() => this.st.overlayGet.all(workspace, JSON.stringify(paths)));
    return new Map(rows.map((row) => [row.path, toEntry(row)]));
  }

  async overlayUnder(workspace: string, dir: string, childrenOnly = false): Promise<OverlayRow[]> {
    const rows = this.guard(() =>
      childrenOnly ? this.st.overlayChildren.all(workspace, dir) : this.st.overlayUnder.all(workspace, ...below(dir)),
    );
    return rows.map((row) => ({ path: row.path, entry: toEntry(row) }));
  }

  async overlayCount(workspace: string): Promise<number> {
    return this.guard(() => this.st.overlayCount.get(workspace) ?? 0);
  }

  async commit(workspace: string, commit: Commit): Promise<number> {
    return this.guard(() => this.commitTx(workspace, commit));
  }

  async moveHead(workspace: string, move: HeadMove): Promise<number> {
    return this.guard(() => this.moveHeadTx(workspace, move));
  }

  // --- checkpoints and events ----------------------------------------------------------------

  async getCheckpoint(workspace: string, nameOrId: string): Promise<CheckpointRecord | null> {
    return this.guard(() => {
      const byName = this.st.checkpointByName.get(workspace, nameOrId);
      if (byName) return byName;
      const byId = this.st.checkpointById.get(nameOrId);
      return byId?.workspace === workspace ? byId : null;
    });
  }

  async getCheckpointById(id: string): Promise<CheckpointRecord | null> {
    return this.guard(() => this.st.checkpointById.get(id) ?? null);
  }

  async listCheckpoints(workspace: string): Promise<CheckpointRecord[]> {
    return this.guard(() => this.st.checkpoints.all(workspace));
  }

  async deleteCheckpoint(workspace: string, id: string): Promise<boolean> {
    return this.guard(() => this.deleteCheckpointTx(workspace, id));
  }

  async listEvents(workspace: string, afterSeq: number, limit: number): Promise<EventRecord[]> {
    return this.guard(() => this.st.events.all(workspace, afterSeq, limit));
  }

  async getWorkspaceSetting(workspace: string, key: string): Promise<string | null> {
    return this.guard(() => this.st.getSetting.get(workspace, key) ?? null);
  }

  async setWorkspaceSetting(workspace: string, key: string, value: string | null): Promise<void> {
    this.guard(() =>
      this.db
        .transaction(() => {
          if (this.st.revision.get(workspace) === undefined) throw noWorkspace(workspace);
          if (value === null) this.st.dropSetting.run(workspace, key);
          else this.st.putSetting.run(workspace, key, value);
        })
        .immediate(),
    );
  }

  async listPathEvents(
    workspace: string,
    path: string,
    beforeSeq: number | null,
    limit: number,
  ): Promise<EventRecord[]> {
    return this.guard(() =>
      this.st.pathEvents.all(workspace, path, beforeSeq ?? Number.MAX_SAFE_INTEGER, Math.max(0, limit)),
    );
  }

  followEvents(
    workspace: string,
    afterSeq: number,
    onEvents: (events: EventRecord[]) => Promise<void> | void,
  ): EventFollower {
    // Other processes write the same file and nothing tells this one: poll the indexed log when
    // the file (or its WAL) changes, and now and then in case a change went unseen.
    return pollEvents((after, limit) => this.listEvents(workspace, after, limit), afterSeq, onEvents, {
      watch: (wake, lost) => watchFile(this.path, wake, lost),
    });
  }

  // --- garbage collection and integrity --------------------------------------------------------

  async gcRoots(): Promise<{ trees: Set<Hash>; blobs: Set<Hash> }> {
    return this.guard(() => {
      const trees = new Set(this.st.checkpointRoots.all());
      const blobs = new Set<Hash>();
      for (const { kind, hash } of this.st.overlayHashes.all()) (kind === "dir" ? trees : blobs).add(hash);
      return { trees, blobs };
    });
  }

  async *listObjects(kind: ObjectKind): AsyncIterable<ObjectInfo> {
    // Paged by hash rather than one open iterator: the connection stays free for other calls
    // made while the caller awaits between items.
    let after = "";
    for (;;) {
      const page = this.guard(() => this.st[kind].list.all(after, LIST_PAGE));
      yield* page;
      const last = page[page.length - 1];
      if (!last || page.length < LIST_PAGE) return;
      after = last.hash;
    }
  }

  async deleteObjects(kind: ObjectKind, hashes: readonly Hash[]): Promise<number> {
    return this.guard(() => this.deleteObjectsTx(kind, hashes));
  }

  repack(onProgress?: OnRepackProgress): Promise<RepackResult> {
    return repackValues(
      sqliteRepackTargets(this.db, (fn) => this.guard(fn)),
      onProgress,
    );
  }

  async sweepChunks(createdBefore: number): Promise<{ deleted: number; bytes: number }> {
    return this.blobs.sweep(createdBefore);
  }

  // --- tokens --------------------------------------------------------------------------------

  async putToken(token: TokenRecord): Promise<void> {
    this.guard(() => this.tokens.put(token));
  }

  async getToken(id: string): Promise<TokenRecord | null> {
    return this.guard(() => this.tokens.get(id));
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.guard(() => this.tokens.list());
  }

  async revokeToken(id: string, at: number): Promise<boolean> {
    return this.guard(() => this.tokens.revoke(id, at));
  }

  // --- approvals -----------------------------------------------------------------------------

  async putApproval(approval: { id: string; createdAt: number; request: string }): Promise<void> {
    this.guard(() => this.approvals.put(approval));
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    return this.guard(() => this.approvals.get(id));
  }

  async listApprovals(): Promise<ApprovalRecord[]> {
    return this.guard(() => this.approvals.list());
  }

  async decideApproval(id: string, decision: string): Promise<boolean> {
    return this.guard(() => this.approvals.decide(id, decision));
  }

  async revokeApproval(id: string, at: number): Promise<boolean> {
    return this.guard(() => this.approvals.revoke(id, at));
  }

  async deleteApprovals(ids: readonly string[]): Promise<number> {
    return this.guard(() => this.approvals.delete(ids));
  }

  async checkIntegrity(): Promise<string[]> {
    return this.guard(() => {
      const problems: string[] = [];
      for (const line of this.db.pragma("integrity_check", { simple: false }) as { integrity_check: string }[]) {
        if (line.integrity_check !== "ok") problems.push(`sqlite integrity_check: ${line.integrity_check}`);
      }
      type FkRow = { table: string; rowid: number | null; parent: string };
      for (const fk of this.db.pragma("foreign_key_check") as FkRow[]) {
        const row = fk.rowid === null ? "a row" : `row ${fk.rowid}`;
        problems.push(`sqlite foreign_key_check: ${row} of ${fk.table} refers to a missing ${fk.parent} row`);
      }
      for (const ws of this.st.missingHeads.all()) {
        problems.push(`workspace ${ws.name}: head checkpoint ${ws.head} is missing`);
      }
      for (const cp of this.st.missingRoots.all()) {
        problems.push(`workspace ${cp.workspace}: checkpoint ${cp.name}: root tree ${cp.root} is missing`);
      }
      for (const row of this.st.missingOverlayObjects.all()) {
        const object = row.kind === "dir" ? "tree" : "blob";
        problems.push(`workspace ${row.workspace}: live entry ${row.path}: ${object} ${row.hash} is missing`);
      }
      problems.push(...this.blobs.problems());
      return problems;
    });
  }

  // --- internals -----------------------------------------------------------------------------

  /** Runs a synchronous database call, turning SQLite's errors into AfsErrors. */
  private guard<T>(fn: () => T): T {
    if (!this.db.open) throw new AfsError("IO_ERROR", `the store at ${this.path} is closed`);
    try {
      return fn();
    } catch (e) {
      throw sqliteError(e);
    }
  }

  private checkRevision(workspace: string, expected: number): number {
    const revision = this.st.revision.get(workspace);
    if (revision === undefined) throw noWorkspace(workspace);
    if (revision !== expected) throw revisionMoved(workspace, expected, revision);
    return revision;
  }

  private insertCheckpoint(workspace: string, cp: CheckpointRecord): void {
    if (this.st.checkpointById.get(cp.id)) throw checkpointIdTaken(cp);
    if (this.st.checkpointByName.get(workspace, cp.name)) throw checkpointNameTaken(workspace, cp);
    this.st.insertCheckpoint.run(
      cp.id,
      workspace,
      cp.name,
      cp.root,
      cp.parent,
      cp.createdAt,
      cp.actor,
      cp.kind,
      cp.description,
    );
  }

  private appendEvent(workspace: string, seq: number, e: EventInput, time: number): void {
    this.st.insertEvent.run(workspace, seq, e.op, e.path, e.oldHash, e.newHash, e.actor, e.surface, time);
  }
}

function sqliteError(e: unknown): unknown {
  if (!(e instanceof Sqlite.SqliteError)) return e;
  const match = SQLITE_ERRORS.find(([prefix]) => e.code.startsWith(prefix));
  const [, code, advice] = match ?? ["", "IO_ERROR", "store error"];
  return new AfsError(code, `${advice} (${e.message})`, { sqlite: e.code });
}

/** Bounds (exclusive) of every path strictly below `dir`. */
function below(dir: string): [string, string] {
  const prefix = dir === "/" ? "/" : `${dir}/`;
  return [prefix, `${prefix.slice(0, -1)}0`];
}

function entryColumns(row: OverlayRow): [EntryKind | null, Hash | null, number | null, number | null, number | null] {
  const e = row.entry;
  return e ? [e.kind, e.hash, e.size, e.mode, e.mtime] : [null, null, null, null, null];
}

function toEntry(row: OverlayDbRow): Entry | null {
  if (row.kind === null) return null;
  return { kind: row.kind, hash: row.hash as Hash, size: row.size ?? 0, mode: row.mode ?? 0, mtime: row.mtime ?? 0 };
}
