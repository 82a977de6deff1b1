// grep: lines matching a pattern in one file or every text file below a directory.
import { z } from "zod";
import { AfsError, isAfsError } from "../core/errors.js";
import { decodeText } from "../core/text.js";
import type { Volume } from "../volume/volume.js";
import { dirPathArg } from "./args.js";
import { byString, normalizePath } from "./common.js";
import { lineMatcher, type PatternMode } from "./regex.js";
import { filesToSearch } from "./walk.js";

export const grepArgs = z.strictObject({
  path: dirPathArg.describe(
    'File to search, or directory to search recursively (default "/"). Binary files are skipped.',
  ),
  pattern: z
    .string()
    .min(1)
    .describe("What to look for. By default a fixed string (no special characters); see glob and regexp."),
  fixed_strings: z.boolean().optional().describe("Treat pattern as a literal string. This is the default."),
  glob: z
    .boolean()
    .optional()
    .describe(
      'Treat pattern as a glob matched against the whole line: * any characters, ? one character, [abc] a class, {a,b} alternatives. Use "*TODO*" to find TODO anywhere in a line.',
    ),
  regexp: z
    .boolean()
    .optional()
    .describe(
      "Treat pattern as an RE2 regular expression (Go/RE2 syntax: no backreferences or lookaround), searched within each line.",
    ),
  ignore_case: z.boolean().optional().describe("Match letters case-insensitively."),
  word_regexp: z
    .boolean()
    .optional()
    .describe("Only match whole words: the match may not touch a letter, digit or underscore on either side."),
  line_regexp: z.boolean().optional().describe("Only match when the pattern matches the entire line."),
  invert_match: z.boolean().optional().describe("Select the lines that do NOT match."),
  files_with_matches: z
    .boolean()
    .optional()
    .describe("Return only the paths of files with at least one selected line, not the lines."),
  count: z
    .boolean()
    .optional()
    .describe("Return the number of selected lines per file (files with none are left out)."),
  max_count: z.number().int().min(1).optional().describe("Stop reading a file after this many selected lines."),
});
export type GrepArgs = z.infer<typeof grepArgs>;

export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line without its line ending. */
  text: string;
}

export type GrepResult =
  | { mode: "matches"; matches: GrepMatch[] }
  | { mode: "files"; files: string[] }
  | { mode: "counts"; counts: { path: string; count: number }[] };

export async function grep(volume: Volume, args: GrepArgs): Promise<GrepResult> {
  const path = normalizePath(args.path ?? "/");
  const modes = (["fixed_strings", "glob", "regexp"] as const).filter((m) => args[m]);
  if (modes.length > 1) {
    throw new AfsError("INVALID_ARGUMENT", `choose one of ${modes.join(", ")}; they are different pattern syntaxes`);
  }
  if (args.files_with_matches && args.count) {
    throw new AfsError("INVALID_ARGUMENT", "choose files_with_matches or count, not both");
  }
  if (args.glob && args.word_regexp) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      'word_regexp does not apply to glob, which always matches the whole line; write the word boundaries into the glob (e.g. "* name *") or use regexp',
    );
  }
  const mode: PatternMode = args.regexp ? "regexp" : args.glob ? "glob" : "fixed";
  const matches = lineMatcher({
    pattern: args.pattern,
    mode,
    ignoreCase: args.ignore_case,
    word: args.word_regexp,
    line: args.line_regexp,
  });
  const invert = args.invert_match === true;
  const limit = args.max_count ?? Number.POSITIVE_INFINITY;

  const found: GrepMatch[] = [];
  const counts: { path: string; count: number }[] = [];
  const files = (await filesToSearch(volume, path)).sort(byString);
  for (const file of files) {
    const text = await readSearchable(volume, file);
    if (text === null) continue;
    let selected = 0;
    const lines = splitForSearch(text);
    for (let i = 0; i < lines.length && selected < limit; i++) {
      const line = lines[i] as string;
      if (matches(line) === invert) continue;
      selected++;
      if (!args.count && !args.files_with_matches) found.push({ path: file, line: i + 1, text: line });
      else if (args.files_with_matches) break;
    }
    if (selected > 0) counts.push({ path: file, count: selected });
  }
  if (args.files_with_matches) return { mode: "files", files: counts.map((c) => c.path) };
  if (args.count) return { mode: "counts", counts };
  return { mode: "matches", matches: found };
}

/** Text of a file to search, or null to skip it (binary, or gone/changed into a directory since the walk). */
async function readSearchable(volume: Volume, path: string): Promise<string | null> {
  try {
    return decodeText(await volume.readFile(path));
  } catch (e) {
    if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
    throw e;
  }
}

/** Lines without their endings (LF or CRLF) and without a BOM; a final newline adds no line. */
function splitForSearch(text: string): string[] {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body === "") return [];
  const lines = body.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}
