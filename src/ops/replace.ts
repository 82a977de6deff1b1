// replace: swaps an exact piece of text for another, refusing ambiguous or missing matches.
import { z } from "zod";
import type { MutationResult, Volume } from "../volume/volume.js";
import { expectedSha256Arg, pathArg, toLf } from "./args.js";
import { normalizePath } from "./common.js";
import { editText } from "./edit-text.js";
import { replaceAt, selectOccurrences } from "./occurrences.js";

export const contextBeforeArg = z
  .string()
  .optional()
  .describe("Text that must come immediately before old (e.g. the preceding line), to pick one of several matches.");
export const contextAfterArg = z
  .string()
  .optional()
  .describe("Text that must come immediately after old (e.g. the following line), to pick one of several matches.");

export const replaceArgs = z.strictObject({
  path: pathArg,
  old: z
    .string()
    .min(1, "old must not be empty; to add text use insert")
    .describe(
      "The exact text to replace, including whitespace and indentation, as read from the file. May span several lines; use \\n for line breaks even in CRLF files.",
    ),
  new: z.string().describe("The text to put in its place (may be empty to delete old)."),
  all: z
    .boolean()
    .optional()
    .describe(
      "Replace every occurrence. Without it, old must match exactly once (after start_line/context narrowing).",
    ),
  expected_occurrences: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Replace only if old matches exactly this many times (after narrowing), and then replace them all."),
  start_line: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Only consider the occurrence that starts on this 1-based line."),
  context_before: contextBeforeArg,
  context_after: contextAfterArg,
  expected_sha256: expectedSha256Arg,
});
export type ReplaceArgs = z.infer<typeof replaceArgs>;

export type ReplaceResult = MutationResult & { replacements: number };

export async function replace(volume: Volume, args: ReplaceArgs): Promise<ReplaceResult> {
  const path = normalizePath(args.path);
  const old = toLf(args.old);
  const replacement = toLf(args.new);
  const selection = {
    all: args.all,
    expected_occurrences: args.expected_occurrences,
    start_line: args.start_line,
    context_before: args.context_before === undefined ? undefined : toLf(args.context_before),
    context_after: args.context_after === undefined ? undefined : toLf(args.context_after),
  };
  return editText(volume, path, "replace", args.expected_sha256, (body) => {
    const chosen = selectOccurrences(path, body, old, selection);
    return { body: replaceAt(body, chosen, old.length, replacement), extra: { replacements: chosen.length } };
  });
}
