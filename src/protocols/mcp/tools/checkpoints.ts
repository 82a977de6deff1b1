// Checkpoint tools: list, create, restore and diff a workspace's named snapshots.
import { z } from "zod";
import type { CheckpointInfo } from "../../../workspace/info.js";
import { checkpointItem } from "../schemas.js";
import { ADDITIVE, defineTool, READ, type Tool, workspaceArg, workspaceFor } from "../tool.js";

const checkpointArg = z.string().min(1);

const brief = (cp: CheckpointInfo) => ({
  name: cp.name,
  kind: cp.kind,
  description: cp.description,
  created_at: cp.created_at,
  actor: cp.actor,
});

const change = z.object({
  status: z.enum(["added", "modified", "deleted", "renamed"]),
  path: z.string(),
  old_path: z.string().optional(),
  kind: z.enum(["file", "dir", "symlink"]),
  old_sha256: z.string().optional(),
  new_sha256: z.string().optional(),
  patch: z.string().optional().describe("Unified diff of a modified text file."),
  binary: z.boolean().optional(),
});

export const checkpointTools: readonly Tool[] = [
  defineTool({
    name: "checkpoint_list",
    title: "List checkpoints",
    family: "checkpoint-read",
    description:
      "List a workspace's checkpoints, newest first. head is the checkpoint the live state starts from; dirty says whether the live state has changes since. With count_changes, each checkpoint says how many paths it changed against its parent.",
    input: z.strictObject({
      workspace: workspaceArg,
      count_changes: z
        .boolean()
        .optional()
        .describe("Count each checkpoint's changed paths against its parent (a tree walk per checkpoint)."),
    }),
    output: z.object({
      workspace: z.string(),
      head: z.string(),
      dirty: z.boolean(),
      checkpoints: z.array(
        checkpointItem.extend({
          parent: z.string().nullable().describe("The checkpoint it was made on, by name; null for the first."),
          changes: z.number().optional().describe("Paths changed against the parent (with count_changes)."),
        }),
      ),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const [list, info, counts] = await Promise.all([
        ctx.afs.checkpoints.list(workspace),
        ctx.afs.workspaces.get(workspace),
        args.count_changes ? ctx.afs.checkpoints.changeCounts(workspace) : null,
      ]);
      const names = new Map(list.map((c) => [c.id, c.name]));
      const checkpoints = list.map((c) => {
        const item = { ...brief(c), parent: c.parent === null ? null : (names.get(c.parent) ?? c.parent) };
        const changes = counts?.get(c.name);
        return changes === undefined ? item : { ...item, changes };
      });
      return { workspace, head: info.head, dirty: info.dirty, checkpoints };
    },
    text: (r) =>
      [
        `workspace ${r.workspace}: head ${r.head}${r.dirty ? ", live changes not yet checkpointed" : ""}`,
        ...r.checkpoints.map(
          (c) => `${c.name}  ${c.kind}  ${c.created_at}${c.description ? `  ${c.description}` : ""}`,
        ),
      ].join("\n"),
  }),

  defineTool({
    name: "checkpoint_create",
    title: "Create a checkpoint",
    family: "checkpoint-write",
    description:
      "Save the workspace's live state as a named, immutable checkpoint (a name is generated when omitted). Do it before risky changes and after useful results. A workspace without live changes keeps its head and created is false.",
    input: z.strictObject({
      workspace: workspaceArg,
      checkpoint: checkpointArg.optional().describe("Name for the checkpoint; generated when omitted."),
      description: z.string().optional().describe("What this checkpoint captures."),
    }),
    output: z.object({
      workspace: z.string(),
      checkpoint: z.string(),
      created: z.boolean().describe("False when there was nothing to save and the head was kept."),
      kind: z.string(),
      created_at: z.string(),
      description: z.string(),
    }),
    annotations: ADDITIVE,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const { checkpoint, created } = await ctx.afs.checkpoints.create(workspace, {
        name: args.checkpoint,
        description: args.description,
      });
      return {
        workspace,
        checkpoint: checkpoint.name,
        created,
        kind: checkpoint.kind,
        created_at: checkpoint.created_at,
        description: checkpoint.description,
      };
    },
    text: (r) =>
      r.created
        ? `created checkpoint ${r.checkpoint} in workspace ${r.workspace}`
        : `nothing to checkpoint: workspace ${r.workspace} has no live changes (head is ${r.checkpoint})`,
  }),

  defineTool({
    name: "checkpoint_restore",
    title: "Restore a checkpoint",
    family: "checkpoint-write",
    description:
      "Replace the workspace's live state with a checkpoint. Uncheckpointed changes are first saved as a safety checkpoint (named in the result), but only do this when the user wants the live state overwritten.",
    input: z.strictObject({
      workspace: workspaceArg,
      checkpoint: checkpointArg.describe("Name of the checkpoint to restore (see checkpoint_list)."),
    }),
    output: z.object({
      workspace: z.string(),
      checkpoint: z.string(),
      safety_checkpoint: z
        .string()
        .nullable()
        .describe("The checkpoint holding the live changes that were replaced, if there were any."),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const { checkpoint, safety } = await ctx.afs.checkpoints.restore(workspace, args.checkpoint);
      return { workspace, checkpoint: checkpoint.name, safety_checkpoint: safety?.name ?? null };
    },
    text: (r) =>
      `restored workspace ${r.workspace} to checkpoint ${r.checkpoint}` +
      (r.safety_checkpoint ? `; the replaced live changes are saved as ${r.safety_checkpoint}` : ""),
  }),

  defineTool({
    name: "checkpoint_diff",
    title: "Diff checkpoints",
    family: "checkpoint-read",
    description:
      "Show what changed from checkpoint base to checkpoint target: added, modified, deleted and renamed paths, with unified diffs for modified text files. Omit target to compare to the live state, or base to compare from it (what restoring target would change). Long diffs come in pages: the summary counts every change, changes holds limit of them from offset, next_offset names the next page.",
    input: z.strictObject({
      workspace: workspaceArg,
      base: checkpointArg.optional().describe("Checkpoint to compare from; omit for the live state."),
      target: checkpointArg.optional().describe("Checkpoint to compare to; omit for the live state."),
      offset: z.number().int().min(0).optional().describe("Skip this many changes (sorted by path); default 0."),
      limit: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe("At most this many changes, with their hunks (default and ceiling: the result limit)."),
    }),
    output: z.object({
      workspace: z.string(),
      base: z.string().describe('The base checkpoint, or "live".'),
      target: z.string().describe('The target checkpoint, or "live".'),
      summary: z.object({ added: z.number(), modified: z.number(), deleted: z.number(), renamed: z.number() }),
      total: z.number().describe("How many changes there are in all."),
      changes: z.array(change),
      truncated: z.boolean().describe("Whether changes after this page were left off."),
      next_offset: z.number().nullable().describe("offset of the next page; null on the last."),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const offset = args.offset ?? 0;
      const limit = Math.min(args.limit ?? ctx.limits.maxResults, ctx.limits.maxResults);
      const diff = await ctx.afs.checkpoints.diff(workspace, args.base, args.target, { offset, limit });
      const end = offset + diff.changes.length;
      const truncated = end < diff.total;
      return { ...diff, truncated, next_offset: truncated ? end : null };
    },
    text: (r) => {
      const { added, modified, deleted, renamed } = r.summary;
      const lines = r.changes.map((c) => `${c.status} ${c.old_path ? `${c.old_path} -> ` : ""}${c.path}`);
      lines.push(
        `${r.base}..${r.target}: ${added} added, ${modified} modified, ${deleted} deleted, ${renamed} renamed`,
      );
      for (const c of r.changes) if (c.patch) lines.push("", c.patch.trimEnd());
      return lines.join("\n");
    },
  }),
];
