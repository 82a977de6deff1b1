// `afs.checkpoints`: named, immutable snapshots of a workspace, and the changes between them or
// to the live state.

import { AfsError } from "../../core/errors.js";
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
// Loaded when a diff is asked for: diff.ts pulls in the diff library, which `afs fs ls` and the
// other short commands should not load (bench/cli-startup.ts).
import type { Change, DiffSummary } from "../diff.js";
import { type CheckpointInfo, checkpointInfo } from "../info.js";
import { type Engine, liveRoot } from "./engine.js";

export interface DiffResult {
  workspace: string;
  base: string;
  target: string;
  summary: DiffSummary;
  /** Every change, also those outside the page. */
  total: number;
  /** The page asked for (all of them without one), modified text files with hunks. */
  changes: Change[];
}

/** A window on a long list of changes: only its files get hunks, so a page costs its own size. */
export interface DiffPage {
  offset: number;
  limit: number;
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

  /**
   * Changes from checkpoint `base` to checkpoint `target`; either side omitted is the live state
   * (live → a checkpoint is what restoring it would change). With `page`, hunks for that page only.
   */
  async diff(workspace: string, base: string | undefined, target?: string, page?: DiffPage): Promise<DiffResult> {
    if (base === undefined && target === undefined) {
      throw new AfsError("INVALID_ARGUMENT", "name a checkpoint as base or target (the other side may be live)");
    }
    const [from, to] = await Promise.all([this.rootOf(workspace, base), this.rootOf(workspace, target)]);
    const { addPatches, listChanges, summarize } = await import("../diff.js");
    const all = await listChanges(this.engine.trees, from, to);
    const changes = page ? all.slice(page.offset, page.offset + page.limit) : all;
    await addPatches(this.engine.store, changes);
    return {
      workspace,
      base: base ?? "live",
      target: target ?? "live",
      summary: summarize(all),
      total: all.length,
      changes,
    };
  }

  /**
   * How many paths each checkpoint changed against its parent (the first one: against nothing),
   * by name. A tree walk per checkpoint that skips equal subtrees: the cost follows the changes.
   */
  async changeCounts(workspace: string): Promise<Map<string, number>> {
    const records = await this.engine.store.listCheckpoints(workspace);
    const { listChanges } = await import("../diff.js");
    const roots = new Map(records.map((r) => [r.id, r.root]));
    const counts = new Map<string, number>();
    for (const r of records) {
      // A fork's first checkpoint has its parent in the source workspace.
      const parent =
        r.parent === null
          ? null
          : (roots.get(r.parent) ?? (await this.engine.store.getCheckpointById(r.parent))?.root ?? null);
      counts.set(r.name, (await listChanges(this.engine.trees, parent, r.root)).length);
    }
    return counts;
  }

  private async rootOf(workspace: string, checkpoint: string | undefined) {
    return checkpoint === undefined
      ? (await liveRoot(this.engine, workspace)).root
      : (await getCheckpoint(this.engine, workspace, checkpoint)).root;
  }
}
