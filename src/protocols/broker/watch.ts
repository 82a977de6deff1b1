// files/watch sources. A directory-backed root: one non-recursive fs.watch per real directory
// (never through a symlink), each change classified against what was there before (created,
// modified, deleted; a rename shows as deleted + created), coalesced over a short window. A
// workspace root: its event log polled (~100 ms), so changes from any writer are seen.
import { type FSWatcher, watch } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { EventFollower, EventRecord } from "../../core/event.js";
import { isWithin, joinPath, parentOf, segments } from "../../core/paths.js";
import { TEMP_NAME } from "../../volume/local-dir/disk.js";

export type ChangeEvent = "created" | "modified" | "deleted";
export type ChangeSink = (path: string, event: ChangeEvent) => void;
export interface WatchHandle {
  close(): void;
}

const COALESCE_MS = 30;

interface Known {
  dir: boolean;
  mtime: number;
  size: number;
}

/** Watches `path` (a volume path, already confined) under a root whose host directory's real path is `realRoot`. */
export async function watchDisk(
  realRoot: string,
  path: string,
  recursive: boolean,
  sink: ChangeSink,
): Promise<WatchHandle> {
  const host = (v: string): string => join(realRoot, ...segments(v));
  const top = await lstat(host(path));
  const only = top.isDirectory() ? null : path;
  const scope = only ? parentOf(path) : path;
  const deep = recursive && !only;
  const watchers = new Map<string, FSWatcher>();
  const known = new Map<string, Known>();
  const dirty = new Set<string>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  let flushing = Promise.resolve();

  const inScope = (p: string): boolean =>
    (only === null || p === only) && (deep ? isWithin(p, scope) && p !== scope : parentOf(p) === scope);

  const addWatch = (dir: string): void => {
    if (closed || watchers.has(dir)) return;
    try {
      const w = watch(host(dir), { persistent: false }, (_event, name) => {
        if (name === null || TEMP_NAME.test(String(name))) return;
        dirty.add(joinPath(dir, String(name)));
        timer ??= setTimeout(() => {
          timer = null;
          flushing = flushing.then(flush);
        }, COALESCE_MS);
      });
      w.on("error", () => unwatch(dir));
      watchers.set(dir, w);
    } catch {
      // gone already: its parent's event reports it
    }
  };
  const unwatch = (dir: string): void => {
    for (const [d, w] of watchers) {
      if (isWithin(d, dir)) {
        w.close();
        watchers.delete(d);
      }
    }
  };
  /** Records what `dir` holds (and below, when deep); `report` announces each entry as created. */
  const scan = async (dir: string, report: boolean): Promise<void> => {
    const names = await readdir(host(dir)).catch(() => [] as string[]);
    for (const name of names) {
      if (TEMP_NAME.test(name)) continue;
      const p = joinPath(dir, name);
      const st = await lstat(host(p)).catch(() => null);
      if (!st || known.has(p)) continue;
      known.set(p, { dir: st.isDirectory(), mtime: st.mtimeMs, size: st.size });
      if (report && inScope(p)) sink(p, "created");
      if (deep && st.isDirectory()) {
        addWatch(p);
        await scan(p, report);
      }
    }
  };
  const flush = async (): Promise<void> => {
    const paths = [...dirty].sort();
    dirty.clear();
    for (const p of paths) {
      if (closed) return;
      const st = await lstat(host(p)).catch(() => null);
      const prev = known.get(p);
      if (!st) {
        if (!prev) continue;
        for (const k of [...known.keys()]) if (isWithin(k, p)) known.delete(k);
        unwatch(p);
        if (inScope(p)) sink(p, "deleted");
        continue;
      }
      const now: Known = { dir: st.isDirectory(), mtime: st.mtimeMs, size: st.size };
      known.set(p, now);
      if (prev && prev.dir === now.dir) {
        if (!now.dir && (prev.mtime !== now.mtime || prev.size !== now.size) && inScope(p)) sink(p, "modified");
        continue;
      }
      if (prev && inScope(p)) sink(p, "deleted");
      if (inScope(p)) sink(p, "created");
      if (deep && now.dir) {
        addWatch(p);
        await scan(p, true);
      }
    }
  };

  addWatch(scope);
  await scan(scope, false);
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      unwatch("/");
    },
  };
}

/** Follows a workspace's event log from `afterSeq`, reporting each changed path once per batch. */
export function watchEvents(
  follow: (afterSeq: number, onEvents: (events: EventRecord[]) => Promise<void>) => EventFollower,
  afterSeq: number,
  exists: (path: string) => Promise<boolean>,
  path: string,
  recursive: boolean,
  sink: ChangeSink,
): WatchHandle {
  const inScope = (p: string): boolean => (recursive ? isWithin(p, path) : p === path || parentOf(p) === path);
  return follow(afterSeq, async (batch) => {
    // The first event of a path in the batch says whether something was there before.
    const firstOld = new Map<string, EventRecord["oldHash"]>();
    for (const e of batch) if (!firstOld.has(e.path) && inScope(e.path)) firstOld.set(e.path, e.oldHash);
    for (const [p, old] of firstOld) {
      if (!(await exists(p))) sink(p, "deleted");
      else sink(p, old === null ? "created" : "modified");
    }
  });
}
