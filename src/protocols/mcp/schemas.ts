// Output schemas the tools share: entries, mutations, workspaces, checkpoints, and the error shape
// every tool may return instead of its result.
import { z } from "zod";
import { ERROR_CODES } from "../../core/errors.js";

export const entryItem = z.object({
  path: z.string(),
  name: z.string(),
  kind: z.enum(["file", "dir", "symlink"]),
  size: z.number(),
  modified_at: z.string(),
  target: z.string().optional(),
});

/** What every file mutation reports: what it did, where, and the workspace state after it. */
export const mutationResult = z.object({
  operation: z.string(),
  workspace: z.string(),
  path: z.string(),
  kind: z.enum(["file", "dir", "symlink", "deleted"]),
  size: z.number(),
  sha256: z.string().nullable(),
  revision: z.number(),
  dirty: z.boolean().describe("True while the workspace has changes not yet in a checkpoint."),
});

export const workspaceInfo = z.object({
  name: z.string(),
  id: z.string().describe("Stable id; workspace_get and workspace_delete take it in place of the name."),
  description: z.string(),
  head: z.string().describe("Name of the checkpoint the live state starts from."),
  head_checkpoint_id: z.string(),
  template: z
    .string()
    .nullable()
    .describe("The slug this workspace is offered under as a template (workspace_create template_slug), or null."),
  dirty: z.boolean(),
  revision: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const checkpointItem = z.object({
  name: z.string(),
  kind: z.string(),
  description: z.string(),
  created_at: z.string(),
  actor: z.string(),
});

export const toolError = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ToolError = z.infer<typeof toolError>;
