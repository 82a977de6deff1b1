// The directory an `afs acp` session works in is a mount of its workspace: synced by this process
// for the session (listed by `afs status` as running, then stopped), or, when a background `afs
// mount` already keeps it in step, through that process's flushes. Every turn starts and ends
// with a flush and, when the live state changed, a checkpoint.
import { realpath } from "node:fs/promises";
import { AfsError, isAfsError } from "../core/errors.js";
import { mountProcessAlive } from "../mounts/live.js";
import { Mount, mountId } from "../mounts/mount.js";
import { MountedVolume } from "../mounts/mounted-volume.js";
import { LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
import type { Volume } from "../volume/volume.js";
import type { Afs } from "../workspace/afs.js";
import type { CheckpointInfo } from "../workspace/info.js";
import { checkName, workspaceNameFor } from "../workspace/names.js";
import { answerFlushRequests, claim, flushMountProcess } from "./mount-process.js";

export interface SessionMountOptions {
  /** Default: the workspace the directory is mounted on, else one named after the directory. */
  workspace?: string;
  /** First mount of a directory and a workspace that both hold differing files: the side that stays. */
  prefer?: "local" | "remote";
  /** Who this process's sync records uploads as, asked at each commit (see MountOptions.actor). */
  actor?: () => string | undefined;
  /** Where a failed flush requested by another process is told. */
  log?: (line: string) => void;
}

export class SessionMount {
  private constructor(
    readonly afs: Afs,
    readonly workspace: string,
    /** The directory's real path. */
    readonly dir: string,
    /** The sync, when this process runs it (null: a background `afs mount` process does). */
    private readonly mount: Mount | null,
    private readonly flushNow: () => Promise<void>,
    private readonly release: () => Promise<void>,
  ) {}

  static async open(afs: Afs, dir: string, options: SessionMountOptions = {}): Promise<SessionMount> {
    const real = await realpath(dir);
    const id = mountId(real);
    const known = await afs.mounts.get(id);
    const workspace = checkName("workspace", options.workspace ?? known?.workspace ?? workspaceNameFor(real));
    if (known && known.workspace !== workspace) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${real} is mounted on workspace ${known.workspace}; run afs acp -w ${known.workspace}, or unmount it first (afs unmount ${real})`,
        { dir: real, workspace: known.workspace },
      );
    }
    const pid = known?.report?.pid;
    if (known && pid !== process.pid && known.report?.state !== "stopped" && mountProcessAlive(pid)) {
      // Already kept in step by another process: one sync per directory, so that one flushes for us.
      if (known.readonly) {
        throw new AfsError(
          "INVALID_ARGUMENT",
          `${real} is mounted read-only (pid ${pid}), so the agent's changes would not be kept; unmount it first (afs unmount ${real})`,
          { dir: real, pid },
        );
      }
      const flush = async () => {
        await flushMountProcess(afs, known, pid);
      };
      return new SessionMount(afs, workspace, real, null, flush, async () => {});
    }
    const release = await claim(afs.home, id, real);
    let mount: Mount;
    try {
      mount = await Mount.start(afs, {
        workspace,
        dir: real,
        ...(options.prefer === undefined ? {} : { prefer: options.prefer }),
        ...(options.actor === undefined ? {} : { actor: options.actor }),
      });
    } catch (e) {
      await release();
      throw forAcp(e);
    }
    // Like a background mount process, this one answers flush requests (`afs run` on DIR, another
    // `afs acp` on it): without a handler, the signal would end the session.
    const flushes = answerFlushRequests(options.log ?? (() => {}));
    flushes.serve(mount);
    return new SessionMount(
      afs,
      workspace,
      real,
      mount,
      async () => {
        await mount.flush();
      },
      async () => {
        flushes.stop();
        await release();
      },
    );
  }

  /** Uploads what changed in the directory and applies what changed in the workspace, until both agree. */
  flush(): Promise<void> {
    return this.flushNow();
  }

  /** The directory as the agent's fs/* methods see it: confined, and every write flushed at once. */
  async volume(): Promise<Volume> {
    return new MountedVolume(await LocalDirVolume.open(this.dir), this.flushNow);
  }

  /** A turn's boundary: flushes, then checkpoints (kind auto) only if the live state changed. */
  async checkpointTurn(options: { name?: string; description?: string } = {}): Promise<CheckpointInfo | null> {
    await this.flush();
    if (!(await this.afs.workspaces.get(this.workspace)).dirty) return null;
    const { checkpoint, created } = await this.afs.checkpoints.create(this.workspace, { ...options, kind: "auto" });
    return created ? checkpoint : null;
  }

  /** Stops this process's sync (uploading what is pending); a background one keeps running. */
  async close(): Promise<void> {
    try {
      await this.mount?.stop();
    } finally {
      await this.release();
    }
  }
}

/** The mount's refused first mount, told in `afs acp`'s words (its flag is --prefer here too). */
function forAcp(e: unknown): unknown {
  if (!isAfsError(e) || e.code !== "CONFLICT" || typeof e.details.differing !== "number") return e;
  const { dir, workspace, differing, paths } = e.details as {
    dir: string;
    workspace: string;
    differing: number;
    paths: string[];
  };
  const shown = paths.slice(0, 5).join(", ");
  const more = differing > 5 ? ` and ${differing - 5} more` : "";
  return new AfsError(
    "CONFLICT",
    `${dir} and workspace ${workspace} both hold files that differ (${differing}: ${shown}${more}); choose which side stays with afs acp --prefer local|remote (the other side's versions are kept beside them as conflict copies), or pick another workspace with -w`,
    e.details,
  );
}
