// One attached directory across an agent's turns (what `afs acp` runs on): a watcher collects what
// changed on disk, each record examines only that, and a turn that changed files ends with a
// checkpoint. A record whose watcher may have missed something examines the whole directory.
import { DirWatcher, type DirWatcherOptions } from "../volume/dir-watcher.js";
import type { Afs } from "./afs.js";
import { realDirectory } from "./attachments.js";
import type { CheckpointInfo } from "./info.js";
import type { RecordResult } from "./record.js";

export interface AttachedSessionOptions {
  /** Workspace name; default the directory's base name (or the workspace it is attached to). */
  workspace?: string;
  description?: string;
  /** Take an existing workspace that is not attached yet (its live state becomes the directory). */
  adopt?: boolean;
  /** Watch the directory (default true); without it every record examines the whole tree. */
  watch?: boolean;
  watcher?: DirWatcherOptions;
}

export class AttachedSession {
  private constructor(
    readonly afs: Afs,
    readonly workspace: string,
    /** The directory's real path. */
    readonly dir: string,
    private readonly watcher: DirWatcher | null,
  ) {}

  /** Attaches `dir` (creating its workspace on first use), watching it before the first full record. */
  static async open(afs: Afs, dir: string, options: AttachedSessionOptions = {}): Promise<AttachedSession> {
    // Watching starts first, so nothing changed during the attach's record is missed.
    const watcher = options.watch === false ? null : await DirWatcher.open(await realDirectory(dir), options.watcher);
    try {
      const attached = await afs.attachments.attach(dir, options);
      return new AttachedSession(afs, attached.workspace, attached.dir, watcher);
    } catch (e) {
      watcher?.close();
      throw e;
    }
  }

  /** Records what changed on disk since the previous record; `full` says the whole tree was examined. */
  async record(): Promise<RecordResult & { full: boolean }> {
    const taken = this.watcher ? await this.watcher.take() : { paths: [], complete: false };
    const result = await this.afs.attachments.record(this.workspace, taken.complete ? { paths: taken.paths } : {});
    return { ...result, full: !taken.complete };
  }

  /** Ends a turn: records the directory, then checkpoints (kind auto) only if the live state changed. */
  async checkpointTurn(options: { name?: string; description?: string } = {}): Promise<CheckpointInfo | null> {
    await this.record();
    if (!(await this.afs.workspaces.get(this.workspace)).dirty) return null;
    const { checkpoint, created } = await this.afs.checkpoints.create(this.workspace, { ...options, kind: "auto" });
    return created ? checkpoint : null;
  }

  /** Directories the watcher watches (0 without one). */
  get watchedDirectories(): number {
    return this.watcher?.watching ?? 0;
  }

  close(): void {
    this.watcher?.close();
  }
}
