// patch: several line- or text-addressed edits to one file, applied in order to the already-patched
// text and written at once: either every patch applies or the file is left untouched.
import { z } from "zod";
import { AfsError, isAfsError } from "../core/errors.js";
import type { MutationResult, Volume } from "../volume/volume.js";
import { expectedSha256Arg, pathArg, toLf } from "./args.js";
import { normalizePath } from "./common.js";
import { editText } from "./edit-text.js";
import {
  fromDoc,
  insertAfter,
  insertionPoint,
  type LineDoc,
  lineRange,
  replaceRange,
  sameLines,
  toDoc,
} from "./line-edits.js";
import { replaceAt, selectOccurrences } from "./occurrences.js";
import { contextAfterArg, contextBeforeArg } from "./replace.js";

export const patchItem = z.strictObject({
  op: z
    .enum(["replace", "insert", "delete"])
    .describe(
      "replace: swap old (exact text) or lines start_line..end_line for new. insert: add new as lines after start_line (0 = beginning, -1 = end). delete: remove old, or lines start_line..end_line.",
    ),
  start_line: z
    .number()
    .int()
    .min(-1)
    .optional()
    .describe(
      "1-based line, counted in the text as left by the earlier patches. With old and no end_line it only picks the occurrence starting on this line.",
    ),
  end_line: z
    .number()
    .int()
    .min(-1)
    .optional()
    .describe("Last line of the range, inclusive (default start_line; -1 = end of file)."),
  old: z
    .string()
    .optional()
    .describe(
      "Exact text to replace or delete. Given together with start_line and end_line it must equal those lines (CONFLICT otherwise), as a safety check.",
    ),
  new: z.string().optional().describe("Replacement text (replace) or the lines to add (insert)."),
  context_before: contextBeforeArg,
  context_after: contextAfterArg,
});
export type PatchItem = z.infer<typeof patchItem>;

export const patchArgs = z.strictObject({
  path: pathArg,
  patches: z
    .array(patchItem)
    .min(1)
    .describe("Edits applied in order; each sees the text as changed by the ones before it."),
  expected_sha256: expectedSha256Arg,
});
export type PatchArgs = z.infer<typeof patchArgs>;

export type PatchResult = MutationResult & { patches_applied: number };

export async function patch(volume: Volume, args: PatchArgs): Promise<PatchResult> {
  const path = normalizePath(args.path);
  return editText(volume, path, "patch", args.expected_sha256, (body) => {
    let current = body;
    args.patches.forEach((p, i) => {
      try {
        current = applyOne(path, current, p);
      } catch (e) {
        if (!isAfsError(e)) throw e;
        const where = `patch ${i + 1} of ${args.patches.length} (${p.op})`;
        throw new AfsError(e.code, `${where}: ${e.message}; no patch was applied`, { ...e.details, patch_index: i });
      }
    });
    return { body: current, extra: { patches_applied: args.patches.length } };
  });
}

const invalid = (message: string): AfsError => new AfsError("INVALID_ARGUMENT", message);

function applyOne(path: string, body: string, p: PatchItem): string {
  const old = p.old === undefined ? undefined : toLf(p.old);
  const replacement = p.new === undefined ? undefined : toLf(p.new);
  const context = {
    context_before: p.context_before === undefined ? undefined : toLf(p.context_before),
    context_after: p.context_after === undefined ? undefined : toLf(p.context_after),
  };
  const hasContext = context.context_before !== undefined || context.context_after !== undefined;
  const doc = toDoc(body);

  if (p.op === "insert") {
    if (replacement === undefined || replacement === "") throw invalid("insert needs new (the lines to add)");
    if (p.start_line === undefined) throw invalid("insert needs start_line (0 = beginning, -1 = end)");
    if (old !== undefined || p.end_line !== undefined || hasContext) {
      throw invalid("insert takes only start_line and new");
    }
    return fromDoc(insertAfter(doc, insertionPoint(path, doc, p.start_line, "start_line"), replacement));
  }

  const by = p.op === "replace" ? replacement : "";
  if (by === undefined) throw invalid('replace needs new (use "" to remove the text)');
  if (p.op === "delete" && replacement !== undefined) throw invalid("delete takes no new; use replace");

  // By line range: start_line without old, or start_line + end_line (+ old as a check).
  if (p.start_line !== undefined && (old === undefined || p.end_line !== undefined)) {
    if (hasContext) throw invalid("context_before/context_after only apply to an old-text match, not a line range");
    const range = lineRange(path, doc, p.start_line, p.end_line ?? p.start_line, ["start_line", "end_line"]);
    if (old !== undefined) checkLines(path, doc, range, old);
    return fromDoc(replaceRange(doc, range.start, range.end, by));
  }
  if (old === undefined) throw invalid(`${p.op} needs old (exact text) or start_line (a line range)`);
  if (p.end_line !== undefined) throw invalid("end_line needs start_line");
  const chosen = selectOccurrences(path, body, old, { start_line: p.start_line, ...context });
  return replaceAt(body, chosen, old.length, by);
}

function checkLines(path: string, doc: LineDoc, range: { start: number; end: number }, old: string): void {
  if (sameLines(doc, range.start, range.end, old)) return;
  const lines = range.start === range.end ? `line ${range.start}` : `lines ${range.start}-${range.end}`;
  throw new AfsError("CONFLICT", `${lines} no longer contain the expected text (old); read the file again and retry`, {
    path,
    start_line: range.start,
    end_line: range.end,
  });
}
