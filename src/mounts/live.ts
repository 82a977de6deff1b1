// What `afs status` and afs_status show of this machine's mounts: each sync writes its own report
// into the mount table every round (Mount, in mounts.db); here it is joined with whether that
// process still runs, since a process that is gone (killed, crashed) cannot say it stopped. No zod
// here: `afs status` loads this module and must start without the library bundles.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MountRecord } from "../core/mount-state.js";
import type { Afs } from "../workspace/afs.js";

/** One mount as listed (its schema, for MCP: ./listing-schema.ts). */
export interface MountListing {
  workspace: string;
  dir: string;
  state: "starting" | "running" | "error" | "stopped";
  readonly: boolean;
  /** The sync process's id while it runs. */
  pid: number | null;
  pending: number;
  conflicts: number;
  /** When the last sync round ended (ISO time). */
  last_sync: string | null;
  last_error: string | null;
}

/** Where the mount processes write their output (one log per mount). */
export const mountsDir = (home: string): string => join(home, "mounts");
export const logFile = (home: string, id: string): string => join(mountsDir(home), `${id}.log`);

/**
 * The afs commands that run a sync: the background `afs mount` process, and `afs acp`, whose
 * session directory is mounted for as long as the session runs.
 */
const SYNC_COMMANDS = ["mount-run", "acp"];

/**
 * Whether `pid` is a process running a mount still. Where /proc exists, a pid the system has since
 * given to another program (or an ended process not yet reaped) does not count.
 */
export function mountProcessAlive(pid: number | null | undefined): pid is number {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8")
      .split("\0")
      .some((arg) => SYNC_COMMANDS.includes(arg));
  } catch {
    return process.platform !== "linux";
  }
}

/** A mount's listing: its report while its process runs; otherwise stopped (or the error it ended on). */
export function listing(record: MountRecord): MountListing {
  const report = record.report;
  const alive = mountProcessAlive(report?.pid);
  const state = alive ? (report?.state ?? "running") : report?.state === "error" ? "error" : "stopped";
  return {
    workspace: record.workspace,
    dir: record.dir,
    state,
    readonly: record.readonly,
    pid: alive ? (report?.pid ?? null) : null,
    pending: report?.pending ?? 0,
    conflicts: report?.conflicts ?? 0,
    last_sync: report?.lastSync ? new Date(report.lastSync).toISOString() : null,
    last_error: report?.lastError ?? null,
  };
}

/** This machine's mounts (the home's mount table), each with its live state. */
export async function listMounts(afs: Afs): Promise<MountListing[]> {
  // A home that never mounted has no table, and looking should not create one.
  if (!existsSync(join(afs.home, "mounts.db"))) return [];
  return (await afs.mounts.list()).map(listing);
}

/** One line per mount, for people. */
export function describeMount(m: MountListing): string {
  const pid = m.pid === null ? "" : ` pid ${m.pid}`;
  const last = m.last_sync ? `, last sync ${m.last_sync}` : "";
  const error = m.last_error ? `, last error: ${m.last_error}` : "";
  const mode = m.readonly ? " (read-only)" : "";
  return `${m.workspace} on ${m.dir}${mode}: ${m.state}${pid}, ${m.pending} pending, ${m.conflicts} conflicts${last}${error}`;
}
