// `afs.checkpoints`: named, immutable snapshots of a workspace, and the changes between them or
// to the live state.

import type { Volume } from "../../volume/volume.js";
import { CheckpointVolume } from "../checkpoint-volume.js";
import {
  type CreateCheckpointOptions,
  createCheckpoint,
  deleteCheckpoint,
  getCheckpoint,
  listCheckpoints,
  restoreCheckpoint,
} from "../checkpoints.js";
import type { Change, DiffSummary } from "../diff.js";
import { type CheckpointInfo, checkpointInfo } from "../info.js";
import { type Engine, liveRoot } from "./engine.js";

export interface DiffResult {
  workspace: string;
  base: string;
  target: string;
  summary: DiffSummary;
  changes: Change[];
}

export class Checkpoints {
  constructor(private readonly engine: Engine) {}

  /**
   * Folds the live state into a new checkpoint and makes it head. On a clean workspace (or one
   * whose live changes add up to nothing) it returns the head with created=false.
   */
  create(
    workspace: string,
    options?: CreateCheckpointOptions,
  ): Promise<{ checkpoint: CheckpointInfo; created: boolean }> {
    return createCheckpoint(this.engine, workspace, options);
  }

  /** Newest first. */
  list(workspace: string): Promise<CheckpointInfo[]> {
    return listCheckpoints(this.engine, workspace);
  }

  async get(workspace: string, name: string): Promise<CheckpointInfo> {
    return checkpointInfo(await getCheckpoint(this.engine, workspace, name));
  }

  restore(workspace: string, name: string) {
    return restoreCheckpoint(this.engine, workspace, name);
  }

  delete(workspace: string, name: string): Promise<void> {
    return deleteCheckpoint(this.engine, workspace, name);
  }

  /** The checkpoint as a read-only Volume: the file operations read it as they read the live state. */
  async volume(workspace: string, name: string): Promise<Volume> {
    const cp = await getCheckpoint(this.engine, workspace, name);
    const e = this.engine;
    return new CheckpointVolume(e.store, e.trees, e.caches.blobs, workspace, cp.name, cp.root, cp.createdAt);
  }

  /** Changes from checkpoint `base` to checkpoint `target`, or to the live state when omitted. */
  async diff(workspace: string, base: string, target?: string): Promise<DiffResult> {
    const from = await getCheckpoint(this.engine, workspace, base);
    const to = target
      ? (await getCheckpoint(this.engine, workspace, target)).root
      : (await liveRoot(this.engine, workspace)).root;
    const { diffTrees, summarize } = await import("../diff.js");
    const changes = await diffTrees(this.engine.store, this.engine.trees, from.root, to);
    return { workspace, base, target: target ?? "live", summary: summarize(changes), changes };
  }
}
