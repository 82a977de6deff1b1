// list: a directory's entries, optionally several levels deep.
import { z } from "zod";
import { parentOf } from "../core/paths.js";
import type { Stat, Volume } from "../volume/volume.js";
import { dirPathArg } from "./args.js";
import { byString, type EntryItem, mustStat, normalizePath, toItem } from "./common.js";

export const listArgs = z.strictObject({
  path: dirPathArg.describe('Directory to list (default "/"). Listing a file returns just that file.'),
  depth: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("How many levels to descend: 1 (default) lists direct children, 2 also their children, and so on."),
});
export type ListArgs = z.infer<typeof listArgs>;

export interface ListResult {
  path: string;
  /**
   * Depth-first: each directory is followed by its own contents. Within one directory,
   * subdirectories come first, then everything else, each group by name.
   */
  items: EntryItem[];
}

export async function list(volume: Volume, args: ListArgs): Promise<ListResult> {
  const path = normalizePath(args.path ?? "/");
  const stat = await mustStat(volume, path);
  if (stat.kind !== "dir") return { path, items: [toItem(stat)] };

  const byDir = new Map<string, Stat[]>();
  for await (const s of volume.walk(path, args.depth ?? 1)) {
    const dir = parentOf(s.path);
    const group = byDir.get(dir);
    if (group) group.push(s);
    else byDir.set(dir, [s]);
  }
  const items: EntryItem[] = [];
  const emit = (dir: string): void => {
    const children = (byDir.get(dir) ?? []).sort(dirsFirst);
    for (const child of children) {
      items.push(toItem(child));
      if (child.kind === "dir") emit(child.path);
    }
  };
  emit(path);
  return { path, items };
}

const dirsFirst = (a: Stat, b: Stat): number =>
  a.kind === "dir" && b.kind !== "dir" ? -1 : b.kind === "dir" && a.kind !== "dir" ? 1 : byString(a.name, b.name);
