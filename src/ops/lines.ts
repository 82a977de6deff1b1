// lines: a numbered slice of a text file, keeping the file's own line endings.
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { Volume } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";
import { readText } from "./edit-text.js";

export const linesArgs = z.strictObject({
  path: pathArg,
  start: z
    .number()
    .int()
    .describe("First line to return, 1-based. Past the end of the file gives empty content, not an error."),
  end: z
    .number()
    .int()
    .min(-1)
    .optional()
    .describe("Last line to return, inclusive; -1 (default) means the end of the file. Clamped to the file's length."),
});
export type LinesArgs = z.infer<typeof linesArgs>;

export interface LinesResult {
  path: string;
  /** The first line returned (as asked). */
  start: number;
  /** The last line returned, after clamping; start - 1 when nothing was returned. */
  end: number;
  total_lines: number;
  content: string;
  /** The whole file's sha256, to pass as expected_sha256 to an edit. */
  sha256: Hash;
  /** Set when the range held no lines, saying why. */
  note?: string;
}

// A line with its own ending: "\n", "\r\n", or none for an unterminated last line.
const LINE = /[^\n]*\n|[^\n]+$/g;

/** A text's lines, each with its own line ending (the last may have none). */
export const linesOf = (text: string): string[] => text.match(LINE) ?? [];

export async function lines(volume: Volume, args: LinesArgs): Promise<LinesResult> {
  const path = normalizePath(args.path);
  if (args.start < 1) {
    throw new AfsError("INVALID_ARGUMENT", `start must be 1 or more (lines are numbered from 1); got ${args.start}`, {
      path,
    });
  }
  const requestedEnd = args.end ?? -1;
  if (requestedEnd !== -1 && requestedEnd < args.start) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `end (${requestedEnd}) must be -1 (end of file) or at least start (${args.start})`,
      {
        path,
      },
    );
  }
  const file = await readText(volume, path, 'read it with encoding "base64" instead');
  const text = file.shape.bom ? file.text.slice(1) : file.text;
  const all = linesOf(text);
  const total = all.length;
  const start = args.start;
  if (start > total) {
    return {
      path,
      start,
      end: start - 1,
      total_lines: total,
      content: "",
      sha256: file.sha256,
      note: `start ${start} is past the end of the file, which has ${total} line${total === 1 ? "" : "s"}`,
    };
  }
  const end = requestedEnd === -1 ? total : Math.min(requestedEnd, total);
  return {
    path,
    start,
    end,
    total_lines: total,
    content: all.slice(start - 1, end).join(""),
    sha256: file.sha256,
  };
}
