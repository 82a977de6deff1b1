// list: a directory's entries, optionally several levels deep.
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import { parentOf, segments } from "../core/paths.js";
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
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("At most this many items; with more, the result holds a cursor for the next page."),
  cursor: z
    .string()
    .optional()
    .describe("The cursor of the previous page's result, with the same path and depth: the listing goes on after it."),
});
export type ListArgs = z.infer<typeof listArgs>;

export interface ListResult {
  path: string;
  /**
   * Depth-first: each directory is followed by its own contents. Within one directory,
   * subdirectories come first, then everything else, each group by name.
   */
  items: EntryItem[];
  /** Present when limit cut the listing short: pass it as cursor for the next page. */
  cursor?: string;
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
  const ordered: Stat[] = [];
  const emit = (dir: string): void => {
    const children = (byDir.get(dir) ?? []).sort(dirsFirst);
    for (const child of children) {
      ordered.push(child);
      if (child.kind === "dir") emit(child.path);
    }
  };
  emit(path);
  // Only the page becomes items: in a directory of 100,000 entries, making every item (its ISO
  // time) cost more than the walk.
  const depth = args.depth ?? 1;
  const from = args.cursor === undefined ? 0 : startAfter(ordered, path, decodeCursor(args.cursor, path, depth));
  if (args.limit === undefined || ordered.length - from <= args.limit) {
    return { path, items: ordered.slice(from).map(toItem) };
  }
  const page = ordered.slice(from, from + args.limit);
  const last = page[page.length - 1] as Stat;
  return {
    path,
    items: page.map(toItem),
    cursor: encodeCursor({ path: last.path, dir: last.kind === "dir" }, path, depth),
  };
}

/** Where a page ended: the last item's path and whether it was a directory (which sorts first). */
interface ListCursor {
  path: string;
  dir: boolean;
}

// The cursor names the last item, not its index, so a page goes on at the right place even when
// entries were added or removed between pages (the item itself may be gone).
const encodeCursor = (c: ListCursor, listed: string, depth: number): string =>
  Buffer.from(JSON.stringify({ v: 1, l: listed, n: depth, p: c.path, d: c.dir })).toString("base64url");

function decodeCursor(cursor: string, listed: string, depth: number): ListCursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    raw = null;
  }
  const c = raw as { v?: unknown; l?: unknown; n?: unknown; p?: unknown; d?: unknown } | null;
  if (c?.v !== 1 || typeof c.p !== "string" || typeof c.d !== "boolean") {
    throw new AfsError("INVALID_ARGUMENT", "cursor is not one list returned; pass the cursor of a previous page as is");
  }
  if (c.l !== listed || c.n !== depth) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "cursor belongs to a listing of another path or depth; repeat the same path and depth with it, or drop it to start over",
    );
  }
  return { path: c.p, dir: c.d };
}

/** The index of the first item listed after the cursor, in the listing's order (see ListResult.items). */
function startAfter(items: readonly Stat[], listed: string, cursor: ListCursor): number {
  const skip = segments(listed).length;
  const at = segments(cursor.path).slice(skip);
  const after = (item: Stat): boolean => {
    const it = segments(item.path).slice(skip);
    for (let i = 0; i < Math.min(it.length, at.length); i++) {
      const [a, b] = [it[i] as string, at[i] as string];
      if (a === b) continue;
      // A name with more below it is a directory; the last name is one when its entry is.
      const aDir = i < it.length - 1 || item.kind === "dir";
      const bDir = i < at.length - 1 || cursor.dir;
      if (aDir !== bDir) return bDir;
      return a > b;
    }
    // One is the other's ancestor: a directory is listed before its contents.
    return it.length > at.length;
  };
  // The items are in that order, so the first one after the cursor splits them.
  let [lo, hi] = [0, items.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (after(items[mid] as Stat)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const dirsFirst = (a: Stat, b: Stat): number =>
  a.kind === "dir" && b.kind !== "dir" ? -1 : b.kind === "dir" && a.kind !== "dir" ? 1 : byString(a.name, b.name);
