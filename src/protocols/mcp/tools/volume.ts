// Opening the volume a file tool acts on (with the home's search indexes beside it, for the tools
// that search), and shaping a mutation's result the same way for all.
import type { SearchIndexes } from "../../../search/indexes.js";
import type { MutationResult, Volume } from "../../../volume/volume.js";
import { type ToolContext, workspaceFor } from "../tool.js";

/**
 * Splits off the workspace (and, for the read tools, checkpoint) arguments and opens that
 * workspace's live state, or the checkpoint, read-only.
 */
export async function openVolume<A extends { workspace?: string | undefined; checkpoint?: string | undefined }>(
  ctx: ToolContext,
  input: A,
): Promise<{ workspace: string; volume: Volume; args: Omit<A, "workspace" | "checkpoint"> }> {
  const { workspace: requested, checkpoint, ...args } = input;
  const workspace = await workspaceFor(ctx, requested);
  const volume =
    checkpoint === undefined
      ? await ctx.afs.workspaces.volume(workspace, ctx.actor, "mcp")
      : await ctx.afs.checkpoints.volume(workspace, checkpoint);
  return { workspace, volume, args };
}

/** The home's search indexes (keyed by content, so one pair serves every workspace). */
export const searchIndexes = (ctx: ToolContext): SearchIndexes => ({
  text: ctx.afs.indexes.text,
  query: ctx.afs.indexes.query,
});

/** A mutation's result with the operation, workspace and whether it now differs from its head. */
export async function mutation<R extends MutationResult>(
  ctx: ToolContext,
  operation: string,
  workspace: string,
  result: R,
): Promise<R & { operation: string; workspace: string; dirty: boolean }> {
  const { dirty } = await ctx.afs.workspaces.get(workspace);
  return { operation, workspace, ...result, dirty };
}

export const shortHash = (hash: string | null): string => (hash ? hash.slice(0, 12) : "-");

/** One line for a mutation, e.g. "file_write /a.txt in demo: 12 bytes, sha256 …, revision 3 (uncheckpointed)". */
export function describeMutation(r: MutationResult & { operation: string; workspace: string; dirty: boolean }): string {
  const what = r.kind === "deleted" ? "deleted" : `${r.kind}, ${r.size} bytes, sha256 ${r.sha256 ?? "-"}`;
  const state = r.dirty ? "live changes not yet checkpointed" : "clean";
  return `${r.operation} ${r.path} in workspace ${r.workspace}: ${what}; revision ${r.revision}, ${state}`;
}
