// What a sync of a directory with its workspace shares about recording disk changes: when a file's
// stat cannot vouch for its content (RACY_MS), and which of a watcher's changed paths to examine.

import { ancestors, baseName, normalizePath, parentOf, ROOT } from "../core/paths.js";
import { IGNORE_FILES } from "../volume/dir-scan.js";

/**
 * git's "racily clean" problem: a file written again within the same timestamp tick as the sync
 * that read it keeps its size and mtime, so a stat match cannot prove it unchanged. A file whose
 * mtime is within this margin of now (or later) is therefore always read.
 * 2 s covers coarse filesystem clocks; with the watcher, a later write also produces an event.
 */
export const RACY_MS = 2_000;

/**
 * The paths to examine: normalized, an ignore file standing for its whole directory (its rules
 * changed), temp files dropped, and nothing that lies inside another target.
 */
export function recordTargets(paths: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const raw of paths) {
    let p: string;
    try {
      p = normalizePath(raw);
    } catch {
      continue;
    }
    const name = baseName(p);
    if (IGNORE_FILES.includes(name)) p = parentOf(p);
    out.add(p);
  }
  return outermost(out);
}

/** The paths of `set` that lie inside no other path of it. */
function outermost(set: ReadonlySet<string>): string[] {
  if (set.has(ROOT)) return [ROOT];
  return [...set].filter((p) => !ancestors(p).some((a) => a !== ROOT && set.has(a))).sort();
}
