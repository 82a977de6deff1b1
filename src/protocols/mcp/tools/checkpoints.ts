// Checkpoint tools: list, create, restore and diff a workspace's named snapshots.
import { z } from "zod";
import { capResults } from "../../../access/limits.js";
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
      "List a workspace's checkpoints, newest first. head is the checkpoint the live state starts from; dirty says whether the live state has changes since.",
    input: z.strictObject({ workspace: workspaceArg }),
    output: z.object({
      workspace: z.string(),
      head: z.string(),
      dirty: z.boolean(),
      checkpoints: z.array(checkpointItem),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const [list, info] = await Promise.all([ctx.afs.checkpoints.list(workspace), ctx.afs.workspaces.get(workspace)]);
      return { workspace, head: info.head, dirty: info.dirty, checkpoints: list.map(brief) };
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
      "Show what changed from checkpoint base to checkpoint target, or to the live state when target is omitted: added, modified, deleted and renamed paths, with unified diffs for modified text files.",
    input: z.strictObject({
      workspace: workspaceArg,
      base: checkpointArg.describe("Checkpoint to compare from."),
      target: checkpointArg.optional().describe("Checkpoint to compare to; omit for the live state."),
    }),
    output: z.object({
      workspace: z.string(),
      base: z.string(),
      target: z.string().describe('The target checkpoint, or "live".'),
      summary: z.object({ added: z.number(), modified: z.number(), deleted: z.number(), renamed: z.number() }),
      changes: z.array(change),
      truncated: z.boolean(),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const diff = await ctx.afs.checkpoints.diff(workspace, args.base, args.target);
      const { items, truncated } = capResults(ctx.limits, diff.changes);
      return { ...diff, changes: items, truncated };
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
