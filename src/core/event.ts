// A workspace's event log as the engine speaks of it: every mutation appends one record, and
// followers (watches, mounts, the console, history) read them by sequence number. Stores keep them.
import type { Hash } from "./hash.js";

/**
 * Which way into afs a change came (beside who made it): "mcp", "acp", "broker", "cli", "mount",
 * "engine" (a library caller that named none). Events written before surfaces were recorded read
 * as UNKNOWN_SURFACE.
 */
export type Surface = string;
export const UNKNOWN_SURFACE: Surface = "unknown";

export interface EventInput {
  op: string;
  path: string;
  oldHash: Hash | null;
  newHash: Hash | null;
  actor: string;
  surface: Surface;
}

export interface EventRecord extends EventInput {
  workspace: string;
  seq: number;
  time: number;
}

/** A running follow of a workspace's events; close() stops it (a batch being delivered still finishes). */
export interface EventFollower {
  close(): void;
}

/**
 * What a change did to its path, for filtering a log by result. The log holds only changes that
 * happened (a refused or failed call appends nothing), so this is the effect, not success/failure:
 * created, modified, deleted, renamed (both halves of a move), checkpoint, restored, or conflict (a
 * mount uploading a conflict copy).
 */
export const OUTCOMES = ["created", "modified", "deleted", "renamed", "checkpoint", "restored", "conflict"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function outcomeOf(e: Pick<EventInput, "op" | "oldHash" | "newHash">): Outcome {
  switch (e.op) {
    case "checkpoint":
      return "checkpoint";
    case "restore":
      return "restored";
    case "conflict":
      return "conflict";
    case "rename":
      return "renamed";
    case "delete":
      return "deleted";
    case "mkdir":
      return "created";
  }
  if (e.newHash === null) return "deleted";
  return e.oldHash === null ? "created" : "modified";
}
