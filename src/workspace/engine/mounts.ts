// `afs.mounts`: this machine's mount table and each mount's per-path sync state (<home>/mounts.db),
// and the two store steps a mount takes: storing a local file's bytes, and committing its uploads
// with a precondition per path. The sync itself (watcher up, events down) lives in src/mounts/.
import { join } from "node:path";
import { AfsError } from "../../core/errors.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../../core/hash.js";
import type { MountRecord, MountReport, MountState, MountStateStore } from "../../core/mount-state.js";
import { baseName } from "../../core/paths.js";
import { keptChanging, RETRY, retryOnConflict } from "../../core/retry.js";
import { SqliteMountStateStore } from "../../store/mount-state-sqlite.js";
import type { OpenFile, Stat } from "../../volume/volume.js";
import { openBlob, storeFile } from "../blob-file.js";
import { snapshot } from "../snapshot.js";
import { commitSyncChanges, type SyncChange, type SyncCommitResult } from "../sync-commit.js";
import { type Engine, requireWorkspace } from "./engine.js";

export type { SyncChange, SyncCommitResult, SyncOutcome } from "../sync-commit.js";

export class Mounts {
  #table: MountStateStore | undefined;
  #closed = false;

  constructor(private readonly engine: Engine) {}

  /** Opened on first use, so a process that never mounts never opens the file. */
  private table(): MountStateStore {
    if (this.#closed) throw new AfsError("INVALID_ARGUMENT", "this afs engine is closed; open a new one");
    this.#table ??= SqliteMountStateStore.open(join(this.engine.home, "mounts.db"));
    return this.#table;
  }

  /** This machine's mounts (running or not: the table says what was mounted, not what runs). */
  list(): Promise<MountRecord[]> {
    return this.table().list();
  }

  get(id: string): Promise<MountRecord | null> {
    return this.table().get(id);
  }

  /** Adds or updates a mount of this machine (its last report stays). */
  register(record: Omit<MountRecord, "report">): Promise<void> {
    return this.table().put(record);
  }

  /** Records what a running sync says about itself, for `afs status` in any process. */
  report(id: string, report: MountReport): Promise<void> {
    return this.table().report(id, report);
  }

  /** Forgets a mount and its sync state (the directory and the workspace stay as they are). */
  forget(id: string): Promise<boolean> {
    return this.table().remove(id);
  }

  /** One mount's per-path state (register the mount first). */
  state(id: string): MountState {
    return this.table().state(id);
  }

  /** Stores a local file's bytes in one streamed pass (bounded memory at any size). */
  storeFile(abs: string): Promise<{ hash: Hash; size: number }> {
    return storeFile(this.engine.store, abs);
  }

  /** Stores small bytes (a symlink's target, a small file); `known` is their SHA-256 when already taken. */
  async storeBytes(data: Uint8Array, known?: Hash): Promise<Hash> {
    if (data.length === 0) return EMPTY_SHA256;
    const hash = known ?? sha256(data);
    await this.engine.store.putBlobs([{ hash, data }]);
    return hash;
  }

  /**
   * What the workspace holds at each path (lstat-like: a symlink reported with its target), read
   * from one consistent snapshot with one overlay lookup for them all; absent paths are left out.
   */
  async entries(workspace: string, paths: readonly string[]): Promise<Map<string, Stat>> {
    const { store } = this.engine;
    return retryOnConflict(
      async () => {
        const snap = await snapshot(this.engine, workspace);
        await snap.prefetch(paths);
        const out = new Map<string, Stat>();
        for (const path of paths) {
          const e = await snap.resolve(path);
          if (!e) continue;
          const stat: Stat = { path, name: baseName(path), kind: e.kind, size: e.size, mode: e.mode, mtime: e.mtime };
          if (e.kind !== "dir") stat.sha256 = e.hash;
          if (e.kind === "symlink") {
            const target = e.hash === EMPTY_SHA256 ? Buffer.alloc(0) : await store.getBlob(e.hash);
            if (!target) throw new AfsError("IO_ERROR", `content ${e.hash} is missing from the store; run afs fsck`);
            stat.target = target.toString("utf8");
          }
          out.set(path, stat);
        }
        return (await snap.stillCurrent()) ? out : RETRY;
      },
      { giveUp: keptChanging(workspace, "while a mount read it") },
    );
  }

  /** Stored content by its hash, for streaming to disk (content never changes under its hash). */
  openContent(hash: Hash, size: number): OpenFile {
    return openBlob(this.engine.store, hash, size);
  }

  /**
   * Commits a mount's uploads as one change, each only where the workspace holds its `expect`;
   * recorded as `actor` when given (an ACP agent's turn), else as this engine's actor.
   */
  async commit(
    workspace: string,
    changes: readonly SyncChange[],
    options: { actor?: string | undefined } = {},
  ): Promise<SyncCommitResult> {
    await requireWorkspace(this.engine, workspace);
    // Uploads come through the surface whose engine runs the mount (afs mount, afs acp, afs run);
    // a library caller that named none records them as a mount's.
    const surface = this.engine.surface === "engine" ? "mount" : this.engine.surface;
    const actor = options.actor ?? this.engine.actor;
    return commitSyncChanges({ ...this.engine, surface, actor }, workspace, changes, "sync");
  }

  close(): void {
    this.#closed = true;
    this.#table?.close();
    this.#table = undefined;
  }
}
