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
