// Small pieces most operations share: normalizing path arguments, stat-or-throw, entry items.

import type { EntryKind } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { normalizePath } from "../core/paths.js";
import type { Stat, Volume } from "../volume/volume.js";

export { normalizePath };

export const notFound = (path: string): AfsError =>
  new AfsError("NOT_FOUND", `${path} does not exist; use list or glob to see what is there`, { path });

/** lstat of a path, or NOT_FOUND. */
export async function mustStat(volume: Volume, path: string): Promise<Stat> {
  const stat = await volume.stat(path);
  if (!stat) throw notFound(path);
  return stat;
}

/** One entry as list and glob report it. */
export interface EntryItem {
  path: string;
  name: string;
  kind: EntryKind;
  size: number;
  /** ISO 8601 time of the last modification. */
  modified_at: string;
  /** Only for symlinks: the link's target text. */
  target?: string;
}

export function toItem(stat: Stat): EntryItem {
  const item: EntryItem = {
    path: stat.path,
    name: stat.name,
    kind: stat.kind,
    size: stat.size,
    modified_at: new Date(stat.mtime).toISOString(),
  };
  if (stat.kind === "symlink" && stat.target !== undefined) item.target = stat.target;
  return item;
}

/** Code-point order, the same on every machine (localeCompare is not). */
export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
