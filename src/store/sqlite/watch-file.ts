// Telling an event follower when a SQLite file may hold new events: a watch on its directory, since
// a commit writes the WAL beside it (a file SQLite may remove and create again).
import { existsSync, watch } from "node:fs";
import { basename, dirname } from "node:path";

/**
 * Calls `onChange` when the file, its WAL or its shared-memory file changes, and `onLost` if the
 * watch breaks; null when it cannot watch (an in-memory database, no inotify left).
 */
export function watchFile(path: string, onChange: () => void, onLost: () => void): (() => void) | null {
  if (!existsSync(path)) return null;
  const name = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      // Without a name (some platforms), any change may be the file's.
      if (!changed || changed.startsWith(name)) onChange();
    });
    watcher.on("error", () => {
      watcher.close();
      onLost();
    });
    return () => watcher.close();
  } catch {
    return null;
  }
}
