// delete_lines: removes a 1-based inclusive range of lines.
import { z } from "zod";
import type { MutationResult, Volume } from "../volume/volume.js";
import { expectedSha256Arg, pathArg } from "./args.js";
import { normalizePath } from "./common.js";
import { editText } from "./edit-text.js";
import { fromDoc, lineRange, replaceRange, toDoc } from "./line-edits.js";

export const deleteLinesArgs = z.strictObject({
  path: pathArg,
  start: z.number().int().min(1).describe("First line to delete, 1-based."),
  end: z
    .number()
    .int()
    .min(-1)
    .describe("Last line to delete, inclusive; -1 means the last line of the file. Must not be past the end."),
  expected_sha256: expectedSha256Arg,
});
export type DeleteLinesArgs = z.infer<typeof deleteLinesArgs>;

export type DeleteLinesResult = MutationResult & { deleted_lines: number };

export async function deleteLines(volume: Volume, args: DeleteLinesArgs): Promise<DeleteLinesResult> {
  const path = normalizePath(args.path);
  return editText(volume, path, "delete_lines", args.expected_sha256, (body) => {
    const doc = toDoc(body);
    const { start, end } = lineRange(path, doc, args.start, args.end);
    return { body: fromDoc(replaceRange(doc, start, end, "")), extra: { deleted_lines: end - start + 1 } };
  });
}
