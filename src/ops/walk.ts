// The files a search reads: a file argument itself, or every regular file below a directory.
import type { Volume } from "../volume/volume.js";
import { mustStat } from "./common.js";

/**
 * Paths of the files to search. A path naming a file (or a symlink to one) is searched itself;
 * below a directory only regular files count, and symlinks are not followed (like grep -r), so a
 * search never visits a file twice or loops.
 */
export async function filesToSearch(volume: Volume, path: string): Promise<string[]> {
  const stat = await mustStat(volume, path);
  if (stat.kind !== "dir") return [path];
  const files: string[] = [];
  for await (const s of volume.walk(path)) if (s.kind === "file") files.push(s.path);
  return files;
}
