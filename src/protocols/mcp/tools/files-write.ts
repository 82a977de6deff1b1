// File write tools: write, create_exclusive, replace, insert, delete_lines, patch, delete, rename.
// Each is one operation over the workspace's live state; results say what changed and the new hash.
import { z } from "zod";
import { normalizePath } from "../../../core/paths.js";
import * as ops from "../../../ops/index.js";
import type { MutationResult, Volume } from "../../../volume/volume.js";
import { mutationResult } from "../schemas.js";
import { ADDITIVE, defineTool, EDIT, OVERWRITE, onWorkspace, type Tool, type ToolContext } from "../tool.js";
import { describeMutation, mutation, openVolume } from "./volume.js";

const count = (what: string) => z.number().describe(what);

/** Runs one operation on the call's workspace and reports it as a mutation. */
async function mutate<A extends { workspace?: string | undefined }, R extends MutationResult>(
  ctx: ToolContext,
  operation: string,
  input: A,
  op: (volume: Volume, args: Omit<A, "workspace" | "checkpoint">) => Promise<R>,
) {
  const { workspace, volume, args } = await openVolume(ctx, input);
  return mutation(ctx, operation, workspace, await op(volume, args));
}

export const fileWriteTools: readonly Tool[] = [
  defineTool({
    name: "file_write",
    title: "Write a file",
    family: "file-write",
    description:
      "Write a file's complete content, creating it and any missing parent directories, or overwriting what is there. Use it for new files and full rewrites; for a local change prefer file_replace or file_patch. The change is live at once and stays uncheckpointed until checkpoint_create.",
    input: onWorkspace(ops.writeArgs),
    output: mutationResult,
    annotations: OVERWRITE,
    run: (ctx, input) => mutate(ctx, "file_write", input, ops.write),
    text: describeMutation,
  }),

  defineTool({
    name: "file_create_exclusive",
    title: "Create a file if absent",
    family: "file-write",
    description:
      "Create a file only if nothing exists at the path, atomically: of several agents racing, exactly one succeeds and the others get ALREADY_EXISTS. Use it for locks and claims between agents, or to avoid clobbering a file.",
    input: onWorkspace(ops.createExclusiveArgs),
    output: mutationResult,
    annotations: ADDITIVE,
    run: (ctx, input) => mutate(ctx, "file_create_exclusive", input, ops.createExclusive),
    text: describeMutation,
  }),

  defineTool({
    name: "file_replace",
    title: "Replace text in a file",
    family: "file-write",
    description:
      "Replace an exact piece of text in a file. old must match exactly once unless you pass all or expected_occurrences; narrow an ambiguous match with start_line, context_before or context_after. On failure the error says how often and on which lines old matched. Read the file first and copy old exactly, whitespace included.",
    input: onWorkspace(ops.replaceArgs),
    output: mutationResult.extend({ replacements: count("How many occurrences were replaced.") }),
    annotations: EDIT,
    run: (ctx, input) => mutate(ctx, "file_replace", input, ops.replace),
    text: (r) => `${describeMutation(r)}; ${r.replacements} replaced`,
  }),

  defineTool({
    name: "file_insert",
    title: "Insert lines",
    family: "file-write",
    description:
      "Insert lines into a text file after a given line: 0 inserts at the beginning, -1 appends at the end. The file keeps its line endings.",
    input: onWorkspace(ops.insertArgs),
    output: mutationResult.extend({
      inserted_lines: count("How many lines were inserted."),
      line: count("The line they were inserted after."),
    }),
    annotations: ADDITIVE,
    run: (ctx, input) => mutate(ctx, "file_insert", input, ops.insert),
    text: (r) => `${describeMutation(r)}; ${r.inserted_lines} lines inserted after line ${r.line}`,
  }),

  defineTool({
    name: "file_delete_lines",
    title: "Delete lines",
    family: "file-write",
    description:
      "Delete lines start..end (1-based, inclusive; end -1 = last line) of a text file. Check the range with file_lines first.",
    input: onWorkspace(ops.deleteLinesArgs),
    output: mutationResult.extend({ deleted_lines: count("How many lines were deleted.") }),
    annotations: EDIT,
    run: (ctx, input) => mutate(ctx, "file_delete_lines", input, ops.deleteLines),
    text: (r) => `${describeMutation(r)}; ${r.deleted_lines} lines deleted`,
  }),

  defineTool({
    name: "file_patch",
    title: "Patch a file",
    family: "file-write",
    description:
      "Apply several edits (replace, insert, delete; by exact text or by line range) to one file in order, all or nothing. Prefer it for precise multi-step edits; pass expected_sha256 from your last read to be sure nobody changed the file meanwhile.",
    input: onWorkspace(ops.patchArgs),
    output: mutationResult.extend({ patches_applied: count("How many patches were applied.") }),
    annotations: EDIT,
    run: (ctx, input) => mutate(ctx, "file_patch", input, ops.patch),
    text: (r) => `${describeMutation(r)}; ${r.patches_applied} patches applied`,
  }),

  defineTool({
    name: "file_delete",
    title: "Delete a file or directory",
    family: "file-write",
    description:
      "Delete a file, a symlink (not its target) or a directory (a non-empty one only with recursive). The last checkpoint keeps the old content.",
    input: onWorkspace(ops.deleteArgs),
    output: mutationResult,
    annotations: { ...EDIT, idempotentHint: false },
    run: (ctx, input) => mutate(ctx, "file_delete", input, ops.remove),
    text: describeMutation,
  }),

  defineTool({
    name: "file_rename",
    title: "Move or rename",
    family: "file-write",
    description:
      "Move or rename a file, symlink or directory to new_path, creating missing parents. An existing file at new_path is replaced only with overwrite; a directory never is.",
    input: onWorkspace(ops.renameArgs),
    output: mutationResult.extend({ old_path: z.string().describe("Where the entry was before.") }),
    annotations: EDIT,
    async run(ctx, input) {
      const result = await mutate(ctx, "file_rename", input, ops.rename);
      return { ...result, old_path: normalizePath(input.path) };
    },
    text: (r) => `${describeMutation(r)}; moved from ${r.old_path}`,
  }),
];
