// The Store is the seam for scale: blobs, trees, workspaces, checkpoints, the live overlay and the
// event log. It is asynchronous and knows nothing of SQLite or Redis above its implementations.
// Atomicity is optimistic: every workspace has a revision, and every commit names the revision
// it was computed from; a commit against a moved revision fails with CONFLICT and the caller
// recomputes. That works the same in one process, across processes, and across machines.
import type { Entry } from "../core/entry.js";
import type { EventFollower, EventInput, EventRecord } from "../core/event.js";
import type { Hash } from "../core/hash.js";
import type { ApprovalStore } from "./approvals.js";
import type { ByteRange } from "./chunking.js";
import type { OnRepackProgress, RepackResult } from "./repack.js";
import type { TokenStore } from "./tokens.js";

export type { EventFollower, EventInput, EventRecord };

export const CHECKPOINT_KINDS = ["manual", "auto", "safety", "fork", "import", "initial"] as const;
export type CheckpointKind = (typeof CHECKPOINT_KINDS)[number];

export interface WorkspaceRecord {
  name: string;
  description: string;
  /** Id of the head checkpoint. */
  head: string;
  /** Bumped by every commit; also the sequence number of the newest event. */
  revision: number;
  createdAt: number;
  updatedAt: number;
}

export interface CheckpointRecord {
  /** Store-wide unique id. */
  id: string;
  workspace: string;
  /** Unique within its workspace. */
  name: string;
  root: Hash;
  parent: string | null;
  createdAt: number;
  actor: string;
  kind: CheckpointKind;
  description: string;
}

/** A workspace offered as a template: new workspaces start from its head under this slug. */
export interface TemplateRecord {
  slug: string;
  workspace: string;
}

/** A live change: an entry that replaces what head has at `path`, or null for a deletion. */
export interface OverlayRow {
  path: string;
  entry: Entry | null;
}

export interface Commit {
  /** The revision the change was computed from; CONFLICT when the workspace has moved on. */
  expectRevision: number;
  /** Overlay entries under these directories are removed first (for recursive deletes and renames). */
  clearUnder?: string[];
  /** Overlay rows to set, applied after clearUnder. */
  set: OverlayRow[];
  /** Events to append; each gets the next sequence number. At least one. */
  events: EventInput[];
}

export interface HeadMove {
  expectRevision: number;
  /** A new checkpoint to record before moving head to it, or null to move to an existing one. */
  checkpoint: CheckpointRecord | null;
  head: string;
  /** Drop the whole live overlay (checkpoint folded it, restore discards it). */
  clearOverlay: boolean;
  event: EventInput;
}

/** A workspace exactly as it stands in one store, for copying it into another (`afs migrate`). */
export interface WorkspaceDump {
  workspace: WorkspaceRecord;
  /** Every checkpoint of the workspace, head among them. */
  checkpoints: CheckpointRecord[];
  overlay: OverlayRow[];
  /** The whole event log, oldest first, with the sequence numbers and times it was written with. */
  events: EventRecord[];
}

/**
 * Tokens (tokens.ts) and approvals (approvals.ts) are part of every Store, so all `afs serve`
 * processes share them, and a request asked on one machine is answered from any.
 */
/** A blob to store. */
export interface NewBlob {
  hash: Hash;
  data: Uint8Array;
  /**
   * What blob-codec's `encode(data)` gives, when it was computed already (an import's worker
   * threads deflate off the main thread): a store that keeps encoded values writes it as is.
   * Only for data up to `chunkBytes`; larger data is chunked and each chunk encoded by the store.
   */
  stored?: Uint8Array;
}

export interface Store extends TokenStore, ApprovalStore {
  readonly url: string;
  close(): Promise<void>;

  // Content-addressed objects. Putting an object that exists is a no-op. A blob is named by the
  // SHA-256 of its whole bytes however it is laid out; contents over `chunkBytes` are kept as
  // chunks (chunking.ts), each stored once, so no value is unbounded and ranges read only their chunks.
  /** Blobs up to this many bytes are one value; larger ones are chunked. */
  readonly chunkBytes: number;
  putBlobs(blobs: ReadonlyArray<NewBlob>): Promise<void>;
  /** Hashes and stores a stream in one pass, holding at most two chunks in memory. */
  putBlobStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }>;
  /** A whole blob; QUOTA_EXCEEDED above MAX_WHOLE_BLOB_BYTES (512 MiB): read those in ranges or streams. */
  getBlob(hash: Hash): Promise<Buffer | null>;
  blobSize(hash: Hash): Promise<number | null>;
  /**
   * Each stored blob among `hashes` of at most `max` bytes, whole, given to `visit` in any order
   * (absent ones are not); `bytes` may be a buffer the store reuses, so it is valid only during the
   * call. How a search reads thousands of small texts: a store may read them in batches. A driver may
   * leave it out: CheckedStore then reads one blob at a time.
   */
  eachSmallBlob(hashes: readonly Hash[], max: number, visit: (hash: Hash, bytes: Buffer) => void): Promise<void>;
  /** Up to `length` bytes from `offset` (fewer at the end, none past it); null when the blob is absent. */
  readBlobRange(hash: Hash, offset: number, length: number): Promise<Buffer | null>;
  /**
   * Several ranges of one blob (each as readBlobRange reads it), each stored value they touch read
   * once and only the parts they cover inflated: how a search reads a large file's candidate blocks.
   */
  readBlobRanges(hash: Hash, ranges: readonly ByteRange[]): Promise<Buffer[] | null>;
  /** The blob's bytes in order, a chunk at a time; NOT_FOUND when absent, IO_ERROR on a missing chunk. */
  blobStream(hash: Hash): AsyncIterable<Buffer>;
  hasBlobs(hashes: readonly Hash[]): Promise<Set<Hash>>;
  putTrees(trees: ReadonlyArray<{ hash: Hash; data: Uint8Array }>): Promise<void>;
  getTree(hash: Hash): Promise<Buffer | null>;

  // Workspaces. createWorkspace records the initial checkpoint too; ALREADY_EXISTS on a taken name.
  createWorkspace(ws: WorkspaceRecord, initial: CheckpointRecord): Promise<void>;
  getWorkspace(name: string): Promise<WorkspaceRecord | null>;
  listWorkspaces(): Promise<WorkspaceRecord[]>;
  /** Removes the workspace, its checkpoints, overlay, events and template mark (objects stay until gc). */
  deleteWorkspace(name: string): Promise<boolean>;
  /**
   * Creates a workspace exactly as dumped (checkpoint ids, revision, events with their seq and
   * time) in one atomic step; ALREADY_EXISTS when its name or a checkpoint id is taken. The objects
   * it references must be stored first.
   */
  importWorkspace(dump: WorkspaceDump): Promise<void>;

  // Templates: a workspace may be offered under one slug; a slug names one workspace.
  /**
   * Marks `workspace` as a template under `slug`, replacing any slug it had, or unmarks it (null;
   * a no-op when it is not a template). Atomic. NOT_FOUND when the workspace does not exist;
   * ALREADY_EXISTS when another workspace holds the slug (nothing changes then).
   */
  setTemplate(workspace: string, slug: string | null): Promise<void>;
  /** Every template, ordered by slug. */
  listTemplates(): Promise<TemplateRecord[]>;

  // Settings kept with a workspace (its versioning policy, …): small strings by key, gone with it.
  /** null when the workspace or the setting is absent. */
  getWorkspaceSetting(workspace: string, key: string): Promise<string | null>;
  /** Sets (or with null removes) a setting; NOT_FOUND when the workspace does not exist. */
  setWorkspaceSetting(workspace: string, key: string, value: string | null): Promise<void>;

  // The live overlay.
  overlayGet(workspace: string, paths: readonly string[]): Promise<Map<string, Entry | null>>;
  /** Rows strictly below `dir`; with `childrenOnly`, only its direct children. */
  overlayUnder(workspace: string, dir: string, childrenOnly?: boolean): Promise<OverlayRow[]>;
  overlayCount(workspace: string): Promise<number>;

  /** Applies a live change atomically; returns the new revision. CONFLICT on a stale revision. */
  commit(workspace: string, commit: Commit): Promise<number>;
  /** Moves head (checkpoint, restore) atomically; returns the new revision. CONFLICT on a stale revision. */
  moveHead(workspace: string, move: HeadMove): Promise<number>;

  // Checkpoints, newest first in listings.
  getCheckpoint(workspace: string, nameOrId: string): Promise<CheckpointRecord | null>;
  getCheckpointById(id: string): Promise<CheckpointRecord | null>;
  listCheckpoints(workspace: string): Promise<CheckpointRecord[]>;
  /** Fails with CONFLICT when it is the workspace's head. */
  deleteCheckpoint(workspace: string, id: string): Promise<boolean>;

  listEvents(workspace: string, afterSeq: number, limit: number): Promise<EventRecord[]>;
  /**
   * The events at exactly `path`, newest first, those with seq below `beforeSeq` (null: from the
   * newest), at most `limit`: through a per-path index, so its cost follows the path's own history,
   * never the length of the whole log. [] for a workspace that does not exist.
   */
  listPathEvents(workspace: string, path: string, beforeSeq: number | null, limit: number): Promise<EventRecord[]>;
  /**
   * Delivers the workspace's events after `afterSeq` as they are appended, by this process or any
   * other sharing the store, in order and a batch at a time (the next waits for `onEvents` to
   * settle). A failed read is tried again, from the last event delivered, until close().
   */
  followEvents(
    workspace: string,
    afterSeq: number,
    onEvents: (events: EventRecord[]) => Promise<void> | void,
  ): EventFollower;

  // Garbage collection support.
  /** Every root a live object can hang from: checkpoint roots and overlay entries. */
  gcRoots(): Promise<{ trees: Set<Hash>; blobs: Set<Hash> }>;
  /** All object hashes with their creation time, for the sweep. */
  listObjects(kind: "blob" | "tree"): AsyncIterable<{ hash: Hash; createdAt: number; size: number }>;
  deleteObjects(kind: "blob" | "tree", hashes: readonly Hash[]): Promise<number>;
  /**
   * Deletes chunks no blob uses any more, created before `createdBefore` (younger ones may belong
   * to a putBlobStream still running). Returns how many chunks and bytes went.
   */
  sweepChunks(createdBefore: number): Promise<{ deleted: number; bytes: number }>;
  /**
   * Re-encodes every stored value of blob content (inline blobs and chunks) that blob-codec would
   * now store in another format, one value at a time, each rewritten only if it still exists, so
   * other processes keep reading and writing and nothing gc deleted comes back. A second run
   * repacks nothing.
   */
  repack(onProgress?: OnRepackProgress): Promise<RepackResult>;
  /**
   * Store-level consistency check (e.g. SQLite integrity_check), including every chunk's hash and
   * every chunked blob's chunks being present; returns problems found, naming the blob concerned.
   */
  checkIntegrity(): Promise<string[]>;
}
