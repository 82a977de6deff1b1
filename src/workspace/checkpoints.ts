// Checkpoints: fold the live overlay into an immutable snapshot, list, restore, delete.
// Every head move is a compare-and-set on the workspace revision, retried on a race after a short
// jittered pause (core/retry.ts), so a checkpoint lands even while another process writes without pause.
import { randomUUID } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { keptChanging, RETRY, retryIfConflict, retryOnConflict } from "../core/retry.js";
import type { CheckpointKind, CheckpointRecord } from "../store/store.js";
import { fold } from "./fold.js";
import { type CheckpointInfo, checkpointInfo } from "./info.js";
import { checkName } from "./names.js";
import { type EngineContext, notFoundWorkspace, snapshot } from "./snapshot.js";
import { TreeWriter } from "./tree.js";

export interface CreateCheckpointOptions {
  name?: string;
  description?: string;
  kind?: CheckpointKind;
}

/**
 * Folds the live state into a new checkpoint and makes it head. On a clean workspace (or one
 * whose live changes add up to nothing) it returns the head with created=false.
 */
export async function createCheckpoint(
  ctx: EngineContext,
  workspace: string,
  options: CreateCheckpointOptions = {},
): Promise<{ checkpoint: CheckpointInfo; created: boolean }> {
  if (options.name !== undefined) checkName("checkpoint", options.name);
  // Once, outside the retries: the head move refuses a name taken meanwhile all the same.
  if (options.name !== undefined && (await ctx.store.getCheckpoint(workspace, options.name))) {
    throw new AfsError(
      "ALREADY_EXISTS",
      `checkpoint ${options.name} already exists in ${workspace}; pick another name`,
    );
  }
  // Between reading the revision and moving head, every round trip to the store is time for
  // another writer to win: the head's record is fetched only when it is the answer.
  return retryOnConflict(
    async () => {
      const snap = await snapshot(ctx, workspace);
      const rows = await ctx.store.overlayUnder(workspace, "/");
      if (rows.length === 0) {
        return { checkpoint: checkpointInfo(await requireCheckpointById(ctx, snap.workspace.head)), created: false };
      }
      const writer = new TreeWriter();
      const root = await fold(snap.root, rows, ctx.trees, writer);
      const kind = options.kind ?? "manual";
      const record: CheckpointRecord | null =
        root === snap.root
          ? null
          : {
              id: randomUUID(),
              workspace,
              name: options.name ?? `${kind === "safety" ? "safety" : "cp"}-${snap.revision}`,
              root,
              parent: snap.workspace.head,
              createdAt: Date.now(),
              actor: ctx.actor,
              kind,
              description: options.description ?? "",
            };
      await writer.flush(ctx.store);
      const moved = await retryIfConflict(
        ctx.store.moveHead(workspace, {
          expectRevision: snap.revision,
          checkpoint: record,
          head: record?.id ?? snap.workspace.head,
          clearOverlay: true,
          event: {
            op: "checkpoint",
            path: "/",
            oldHash: snap.root,
            newHash: root,
            actor: ctx.actor,
            surface: ctx.surface,
          },
        }),
      );
      if (moved === RETRY) return RETRY;
      if (!record)
        return { checkpoint: checkpointInfo(await requireCheckpointById(ctx, snap.workspace.head)), created: false };
      ctx.roots.set(record.id, root);
      return { checkpoint: checkpointInfo(record), created: true };
    },
    { giveUp: keptChanging(workspace, "during the checkpoint") },
  );
}

/**
 * Records `root` as a safety checkpoint whose parent is head, without moving head or touching the
 * live state (what a directory held before export --force overwrote it). Null when head has it.
 */
export async function keepRoot(
  ctx: EngineContext,
  workspace: string,
  root: Hash,
  description: string,
): Promise<CheckpointInfo | null> {
  return retryOnConflict(
    async () => {
      const snap = await snapshot(ctx, workspace);
      if (snap.root === root) return null;
      const record: CheckpointRecord = {
        id: randomUUID(),
        workspace,
        name: `safety-${snap.revision}`,
        root,
        parent: snap.workspace.head,
        createdAt: Date.now(),
        actor: ctx.actor,
        kind: "safety",
        description,
      };
      const moved = await retryIfConflict(
        ctx.store.moveHead(workspace, {
          expectRevision: snap.revision,
          checkpoint: record,
          head: snap.workspace.head,
          clearOverlay: false,
          event: { op: "checkpoint", path: "/", oldHash: null, newHash: root, actor: ctx.actor, surface: ctx.surface },
        }),
      );
      if (moved === RETRY) return RETRY;
      ctx.roots.set(record.id, root);
      return checkpointInfo(record);
    },
    { giveUp: keptChanging(workspace, "while saving a safety checkpoint") },
  );
}

export async function listCheckpoints(ctx: EngineContext, workspace: string): Promise<CheckpointInfo[]> {
  if (!(await ctx.store.getWorkspace(workspace))) throw notFoundWorkspace(workspace);
  return (await ctx.store.listCheckpoints(workspace)).map(checkpointInfo);
}

export async function getCheckpoint(ctx: EngineContext, workspace: string, name: string): Promise<CheckpointRecord> {
  if (!(await ctx.store.getWorkspace(workspace))) throw notFoundWorkspace(workspace);
  const cp = await ctx.store.getCheckpoint(workspace, name);
  if (!cp) {
    throw new AfsError(
      "NOT_FOUND",
      `checkpoint ${JSON.stringify(name)} does not exist in workspace ${workspace}`,
      { workspace, checkpoint: name },
      "list-checkpoints",
    );
  }
  return cp;
}

/** Makes a checkpoint the live state; a dirty live state is saved as a safety checkpoint first. */
export async function restoreCheckpoint(
  ctx: EngineContext,
  workspace: string,
  name: string,
): Promise<{ checkpoint: CheckpointInfo; safety: CheckpointInfo | null }> {
  const target = await getCheckpoint(ctx, workspace, name);
  let safety: CheckpointInfo | null = null;
  return retryOnConflict(
    async () => {
      if ((await ctx.store.overlayCount(workspace)) > 0) {
        const saved = await createCheckpoint(ctx, workspace, {
          kind: "safety",
          description: `live state before restoring ${target.name}`,
        });
        if (saved.created) safety = saved.checkpoint;
      }
      const snap = await snapshot(ctx, workspace);
      // Changed again since the safety checkpoint: save those changes too before discarding anything.
      if ((await ctx.store.overlayCount(workspace)) > 0) return RETRY;
      const moved = await retryIfConflict(
        ctx.store.moveHead(workspace, {
          expectRevision: snap.revision,
          checkpoint: null,
          head: target.id,
          clearOverlay: true,
          event: {
            op: "restore",
            path: "/",
            oldHash: snap.root,
            newHash: target.root,
            actor: ctx.actor,
            surface: ctx.surface,
          },
        }),
      );
      return moved === RETRY ? RETRY : { checkpoint: checkpointInfo(target), safety };
    },
    { giveUp: keptChanging(workspace, "during the restore") },
  );
}

export async function deleteCheckpoint(ctx: EngineContext, workspace: string, name: string): Promise<void> {
  const cp = await getCheckpoint(ctx, workspace, name);
  const ws = await ctx.store.getWorkspace(workspace);
  if (ws?.head === cp.id) {
    throw new AfsError(
      "CONFLICT",
      `checkpoint ${name} is the head of ${workspace}; create or restore another checkpoint before deleting it`,
    );
  }
  await ctx.store.deleteCheckpoint(workspace, cp.id);
}

export async function requireCheckpointById(ctx: EngineContext, id: string): Promise<CheckpointRecord> {
  const cp = await ctx.store.getCheckpointById(id);
  if (!cp) throw new AfsError("IO_ERROR", `checkpoint ${id} is missing from the store; run afs fsck`);
  return cp;
}
