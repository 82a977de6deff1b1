// glob: entries below a directory whose name matches a glob pattern.
import { z } from "zod";
import { rebase } from "../core/paths.js";
import type { Stat, Volume } from "../volume/volume.js";
import { dirPathArg } from "./args.js";
import { byString, type EntryItem, mustStat, normalizePath, toItem } from "./common.js";
import { pathGlob } from "./path-glob.js";

export const globArgs = z.strictObject({
  path: dirPathArg.describe('Directory to search below, recursively (default "/").'),
  pattern: z
    .string()
    .min(1)
    .describe(
      'Glob matched against each entry\'s name (basename), e.g. "*.go", "{Makefile,*.mk}", "test_*.py". A pattern containing "/" is matched against the whole path relative to `path` instead, with ** for any number of directories: "src/**/*.test.ts" finds src/a.test.ts and src/x/y/b.test.ts. Hidden files and directories match like any other; .gitignore is not applied.',
    ),
  kind: z
    .enum(["file", "dir", "symlink", "any"])
    .optional()
    .describe('Which entries to return: "file" (default), "dir", "symlink", or "any".'),
});
export type GlobArgs = z.infer<typeof globArgs>;

export interface GlobResult {
  count: number;
  /** Sorted by path. */
  items: EntryItem[];
}

export async function glob(volume: Volume, args: GlobArgs): Promise<GlobResult> {
  const path = normalizePath(args.path ?? "/");
  const kind = args.kind ?? "file";
  const { byPath, isMatch } = pathGlob(args.pattern);
  const stat = await mustStat(volume, path);
  // Matched as the walk goes: only the matches are held, not every entry of a million-file tree.
  const matches: Stat[] = [];
  if (stat.kind === "dir") {
    for await (const s of volume.walk(path)) {
      if ((kind === "any" || s.kind === kind) && isMatch(byPath ? rebase(s.path, path, "/").slice(1) : s.name))
        matches.push(s);
    }
  }
  const items = matches.sort((a, b) => byString(a.path, b.path)).map(toItem);
  return { count: items.length, items };
}
