// What the engine reports about workspaces and checkpoints (the info types every surface shows),
// built from store records. EngineContext and snapshot() live in snapshot.ts.
import type { Hash } from "../core/hash.js";
import type { CheckpointRecord, WorkspaceRecord } from "../store/store.js";
import { workspaceId } from "./names.js";
import type { EngineContext } from "./snapshot.js";

export interface CheckpointInfo {
  id: string;
  name: string;
  kind: string;
  description: string;
  created_at: string;
  actor: string;
  parent: string | null;
  root: Hash;
}

export interface WorkspaceInfo {
  name: string;
  /** Stable id (names.ts); hosted clients may name a workspace by it. */
  id: string;
  description: string;
  head: string;
  head_checkpoint_id: string;
  /** The slug it is offered under as a template, or null. */
  template: string | null;
  dirty: boolean;
  revision: number;
  created_at: string;
  updated_at: string;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

export const checkpointInfo = (cp: CheckpointRecord): CheckpointInfo => ({
  id: cp.id,
  name: cp.name,
  kind: cp.kind,
  description: cp.description,
  created_at: iso(cp.createdAt),
  actor: cp.actor,
  parent: cp.parent,
  root: cp.root,
});

/** `template`: the workspace's template slug (null when it is none), which the caller looked up. */
export async function workspaceInfo(
  ctx: EngineContext,
  ws: WorkspaceRecord,
  template: string | null,
): Promise<WorkspaceInfo> {
  const [head, pending] = await Promise.all([ctx.store.getCheckpointById(ws.head), ctx.store.overlayCount(ws.name)]);
  return {
    name: ws.name,
    id: workspaceId(ws),
    description: ws.description,
    head: head?.name ?? ws.head,
    head_checkpoint_id: ws.head,
    template,
    dirty: pending > 0,
    revision: ws.revision,
    created_at: iso(ws.createdAt),
    updated_at: iso(ws.updatedAt),
  };
}
