// Where afs keeps its data (AFS_HOME) and the small per-home settings file (current workspace,
// attached directories).
import { statSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { makeDirectory } from "../store/make-dir.js";

export interface AfsConfig {
  current_workspace?: string;
  /** Workspace name → absolute real path of the directory attached to it (see attachments.ts). */
  attachments?: Record<string, string>;
}

export const resolveHome = (home?: string): string => resolve(home ?? process.env.AFS_HOME ?? join(homedir(), ".afs"));

export const defaultStoreUrl = (home: string): string => `sqlite:${join(home, "afs.db")}`;

// The file is read on every volume a server opens (is the workspace attached?): keep the parsed
// copy while the file's identity holds. writeConfig renames a new file into place, so any change,
// from any process, gives a new inode.
const cached = new Map<string, { key: string; config: AfsConfig }>();

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
  const tmp = join(home, `config.json.${process.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`);
  await rename(tmp, join(home, "config.json"));
}
