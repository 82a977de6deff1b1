// insert: adds whole lines after a given line (0 = at the beginning, -1 = at the end).
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import type { MutationResult, Volume } from "../volume/volume.js";
import { expectedSha256Arg, pathArg, toLf } from "./args.js";
import { normalizePath } from "./common.js";
import { editText } from "./edit-text.js";
import { fromDoc, insertAfter, insertionPoint, toDoc } from "./line-edits.js";

export const insertArgs = z.strictObject({
  path: pathArg,
  line: z
    .number()
    .int()
    .min(-1)
    .describe("Insert after this 1-based line: 0 inserts at the beginning, -1 at the end of the file."),
  content: z
    .string()
    .min(1, 'content must not be empty; pass "\\n" for one blank line')
    .describe(
      'The lines to insert. A missing final newline is added, so "foo" inserts one line. The file keeps its line endings (CRLF stays CRLF).',
    ),
  expected_sha256: expectedSha256Arg,
});
export type InsertArgs = z.infer<typeof insertArgs>;

export type InsertResult = MutationResult & { inserted_lines: number; line: number };

export async function insert(volume: Volume, args: InsertArgs): Promise<InsertResult> {
  const path = normalizePath(args.path);
  const content = toLf(args.content);
  if (content === "") {
    throw new AfsError("INVALID_ARGUMENT", 'content must not be empty; pass "\\n" for one blank line', { path });
  }
  return editText(volume, path, "insert", args.expected_sha256, (body) => {
    const doc = toDoc(body);
    const after = insertionPoint(path, doc, args.line);
    const next = insertAfter(doc, after, content);
    const inserted = next.lines.length - doc.lines.length;
    return { body: fromDoc(next), extra: { inserted_lines: inserted, line: after } };
  });
}
