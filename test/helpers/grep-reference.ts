// The reference grep the indexed one is checked against: every text file of a volume (after a
// BOM, split on LF / CRLF) tested line by line by the exact matcher, in path order.
import { decodeText } from "../../src/core/text.js";
import type { GrepArgs, GrepResult } from "../../src/ops/index.js";
import { lineMatcher } from "../../src/ops/regex.js";
import type { Volume } from "../../src/volume/volume.js";

/** The reference: every text file split into lines, each tested by the exact matcher. */
export async function scan(volume: Volume, args: GrepArgs): Promise<GrepResult> {
  const matches = lineMatcher({
    pattern: args.pattern,
    mode: args.regexp ? "regexp" : args.glob ? "glob" : "fixed",
    ignoreCase: args.ignore_case,
    word: args.word_regexp,
    line: args.line_regexp,
  });
  const paths: string[] = [];
  for await (const s of volume.walk("/")) if (s.kind === "file") paths.push(s.path);
  paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const found: { path: string; line: number; text: string; before?: string[]; after?: string[] }[] = [];
  const counts: { path: string; count: number }[] = [];
  for (const path of paths) {
    const text = decodeText(await volume.readFile(path));
    if (text === null) continue;
    const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
    const lines = body === "" ? [] : body.split(/\r?\n/);
    if (lines[lines.length - 1] === "") lines.pop();
    let selected = 0;
    for (let i = 0; i < lines.length && selected < (args.max_count ?? Number.POSITIVE_INFINITY); i++) {
      if (matches(lines[i] as string) === (args.invert_match === true)) continue;
      selected++;
      const m: (typeof found)[number] = { path, line: i + 1, text: lines[i] as string };
      if (args.context_before) m.before = lines.slice(Math.max(0, i - args.context_before), i);
      if (args.context_after) m.after = lines.slice(i + 1, i + 1 + args.context_after);
      found.push(m);
      if (args.files_with_matches) break;
    }
    if (selected > 0) counts.push({ path, count: selected });
  }
  if (args.files_with_matches) return { mode: "files", files: counts.map((c) => c.path) };
  if (args.count) return { mode: "counts", counts };
  return { mode: "matches", matches: found };
}
