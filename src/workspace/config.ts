// Where afs keeps its data (AFS_HOME) and the small per-home settings file (the current workspace;
// a key `attachments` left by an older afs is ignored: directories are mounts now, in mounts.db).
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { homeOf, type Settings, storeUrlFrom } from "../core/settings.js";
import { makeDirectory } from "../store/make-dir.js";

export interface AfsConfig {
  current_workspace?: string;
}

export const defaultStoreUrl = (home: string): string => `sqlite:${join(home, "afs.db")}`;

/**
 * Where an engine's data is: the home (--home, else AFS_HOME, else ~/.afs) and the store URL
 * (--store, else AFS_STORE, else the home's SQLite file), relative paths taken from `cwd`.
 */
export function locate(settings: Settings, cwd: string, given: { home?: string; store?: string } = {}) {
  const home = homeOf(settings, cwd, accountHome, given.home);
  return { home, store: storeUrlFrom(given.store ?? settings.store ?? defaultStoreUrl(home), cwd) };
}

/** The account's home directory, for when the settings name no HOME. */
function accountHome(): string {
  try {
    return userInfo().homedir;
  } catch {
    return homedir();
  }
}

// The file is read often (the current workspace, on every command that needs one): keep the parsed
// copy while the file's identity holds. writeConfig renames a new file into place, so any change,
// from any process, gives a new inode.
// Process-wide on purpose, not per engine: it is a memo of a file's content keyed by the file's
// identity, the same answer for every caller (like the page cache), holding nobody's settings.
// Bounded by the number of homes, so a resident afs serving many homes does not grow without end.
const cached = new Map<string, { key: string; config: AfsConfig }>();
const MAX_CACHED_HOMES = 64;

export async function readConfig(home: string): Promise<AfsConfig> {
  const file = join(home, "config.json");
  try {
    // A synchronous stat: microseconds on a local file, where the thread-pool round trip of an
    // asynchronous one cost a read request more than the rest of its engine work.
    const st = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (!st) return {};
    const key = `${st.ino}:${st.size}:${st.mtimeNs}`;
    const hit = cached.get(file);
    if (hit?.key === key) return structuredClone(hit.config);
    const config = JSON.parse(await readFile(file, "utf8")) as AfsConfig;
    cached.delete(file);
    if (cached.size >= MAX_CACHED_HOMES) cached.delete(cached.keys().next().value as string);
    cached.set(file, { key, config });
    return structuredClone(config);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw e;
  }
}

/** Replaces the config file atomically so a crash never leaves half a file. */
export async function writeConfig(home: string, config: AfsConfig): Promise<void> {
  makeDirectory(home, "the afs home");
  // A name of its own per write: two writes at once in one process (a server) must not share one.
  const tmp = join(home, `config.json.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`);
  await rename(tmp, join(home, "config.json"));
}
