// What other processes can see of a running mount: the background process rewrites a small JSON
// file under <home>/mounts/ (atomically) whenever its status changes; readers join those files with
// the mount table, and a process that is gone means the mount is stopped. No zod here: `afs status`
// loads this module and must start without the library bundles.
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Afs } from "../workspace/afs.js";
import type { MountStatus } from "./mount.js";

/** What `afs status` and afs_status show of one mount (its schema, for MCP: ./listing-schema.ts). */
export interface MountListing {
  workspace: string;
  dir: string;
  state: MountStatus["state"];
  readonly: boolean;
  /** The sync process's id while it runs. */
  pid: number | null;
  pending: number;
  conflicts: number;
  conflict_paths: string[];
  uploaded: number;
  downloaded: number;
  /** When the last sync round ended (ISO time). */
  last_sync: string | null;
  last_error: string | null;
}

/** The status file's contents: the mount's own status plus the process that keeps it. */
export interface LiveStatus extends MountStatus {
  pid: number;
}

export const mountsDir = (home: string): string => join(home, "mounts");
export const statusFile = (home: string, id: string): string => join(mountsDir(home), `${id}.json`);
export const logFile = (home: string, id: string): string => join(mountsDir(home), `${id}.log`);

/** Replaces the status file in one rename, so a reader sees the old status or the new one, never half. */
export async function writeLive(home: string, status: LiveStatus): Promise<void> {
  const file = statusFile(home, status.id);
  await mkdir(mountsDir(home), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(status)}\n`);
  await rename(tmp, file);
}

export async function readLive(home: string, id: string): Promise<LiveStatus | null> {
  try {
    return JSON.parse(await readFile(statusFile(home, id), "utf8")) as LiveStatus;
  } catch {
    return null;
  }
}

export async function removeLive(home: string, id: string): Promise<void> {
  await unlink(statusFile(home, id)).catch(() => {});
}

/**
 * Whether `pid` is a mount process still running. Where /proc exists, a pid the system has since
 * given to another program does not count.
 */
export function mountProcessAlive(pid: number | null | undefined): pid is number {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("mount-run");
  } catch {
    return process.platform !== "linux";
  }
}

/** The live status of one mount: its process's status while it runs, else what it last wrote, stopped. */
export function listing(
  record: { workspace: string; dir: string; readonly: boolean },
  live: LiveStatus | null,
): MountListing {
  const alive = mountProcessAlive(live?.pid);
  // A process that ended on an error (a restart that failed) shows that error; any other end is a stop.
  const state = alive ? (live?.state ?? "running") : live?.state === "error" ? "error" : "stopped";
  return {
    workspace: record.workspace,
    dir: record.dir,
    state,
    readonly: record.readonly,
    pid: alive ? (live?.pid ?? null) : null,
    pending: live?.pending ?? 0,
    conflicts: live?.conflicts ?? 0,
    conflict_paths: live?.conflictPaths ?? [],
    uploaded: live?.uploaded ?? 0,
    downloaded: live?.downloaded ?? 0,
    last_sync: live?.lastSync ? new Date(live.lastSync).toISOString() : null,
    last_error: live?.lastError ?? null,
  };
}

/** This machine's mounts (the home's mount table), each with its live status. */
export async function listMounts(afs: Afs): Promise<MountListing[]> {
  // A home that never mounted has no table, and looking should not create one.
  if (!existsSync(join(afs.home, "mounts.db"))) return [];
  const records = await afs.mounts.list();
  return Promise.all(records.map(async (r) => listing(r, await readLive(afs.home, r.id))));
}

/** One line per mount, for people. */
export function describeMount(m: MountListing): string {
  const pid = m.pid === null ? "" : ` pid ${m.pid}`;
  const last = m.last_sync ? `, last sync ${m.last_sync}` : "";
  const error = m.last_error ? `, last error: ${m.last_error}` : "";
  const mode = m.readonly ? " (read-only)" : "";
  return `${m.workspace} on ${m.dir}${mode}: ${m.state}${pid}, ${m.pending} pending, ${m.conflicts} conflicts${last}${error}`;
}
