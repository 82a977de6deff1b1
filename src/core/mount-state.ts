// A mount's memory, in the engine's vocabulary: for each path, the version last synced between
// the directory and the workspace (and the disk stat that held it), plus the last event applied,
// so a sync stopped or killed reconciles both sides' changes when it starts again.
import type { EntryKind } from "./entry.js";
import type { Hash } from "./hash.js";

/** What a path holds, as far as syncing cares: a directory is just "dir"; a symlink's hash is its target's. */
export interface SyncedVersion {
  kind: EntryKind;
  sha256: Hash | null;
  size: number;
  mode: number;
}

export interface SyncedPath extends SyncedVersion {
  path: string;
  /** The disk stat that held this version ("ino:size:mtimeNs:ctimeNs"); a matching stat needs no read. */
  disk: string | null;
}

/** A directory mounted on this machine. */
export interface MountRecord {
  /** Derived from the directory's real path: one mount per directory. */
  id: string;
  workspace: string;
  /** The directory's real path. */
  dir: string;
  readonly: boolean;
  createdAt: number;
  /** What the sync last reported about itself (null: never ran). */
  report: MountReport | null;
}

/** A running (or last) sync's own account, kept in the table so `afs status` can show it from any process. */
export interface MountReport {
  state: "starting" | "running" | "error" | "stopped";
  /** The process running the sync. */
  pid: number;
  pending: number;
  /** Conflicts so far, over every run of this mount. */
  conflicts: number;
  lastSync: number | null;
  lastError: string | null;
  /**
   * When the newest flush began (ms since the epoch): every change on disk made before then has
   * been looked at (uploaded, or counted in `pending`). Lets another process ask for a flush and
   * know when it has been answered (`afs run`).
   */
  flushed?: number | null;
  /** When this report was written (ms since the epoch). */
  at: number;
}

/** One mount's per-path state. Every change touches only the paths it names (O(changes)). */
export interface MountState {
  get(paths: readonly string[]): Promise<Map<string, SyncedPath>>;
  /** The rows at `path` and below it (every row for "/"). */
  under(path: string): Promise<SyncedPath[]>;
  /** Sets and removes rows and, when given, the last event applied: all in one transaction. */
  apply(change: { put?: readonly SyncedPath[]; remove?: readonly string[]; lastSeq?: number }): Promise<void>;
  /** The last event sequence applied (0: none). */
  lastSeq(): Promise<number>;
}

/** The mount table and each mount's state, kept per machine (never in the shared store). */
export interface MountStateStore {
  list(): Promise<MountRecord[]>;
  get(id: string): Promise<MountRecord | null>;
  /** Adds or updates a mount (its report is left as it is). */
  put(record: Omit<MountRecord, "report">): Promise<void>;
  /** Replaces a mount's report (one row written). */
  report(id: string, report: MountReport): Promise<void>;
  /** Forgets a mount and its state. */
  remove(id: string): Promise<boolean>;
  state(id: string): MountState;
  close(): void;
}

export const sameVersion = (a: SyncedVersion | null | undefined, b: SyncedVersion | null | undefined): boolean => {
  if (!a || !b) return !a && !b;
  if (a.kind !== b.kind) return false;
  if (a.kind === "dir") return true;
  if (a.kind === "symlink") return a.sha256 === b.sha256;
  return a.sha256 === b.sha256 && a.mode === b.mode;
};
