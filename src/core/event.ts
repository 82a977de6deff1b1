// A workspace's event log as the engine speaks of it: every mutation appends one record, and
// followers (watches, mounts, the console) read them by sequence number. Stores keep them.
import type { Hash } from "./hash.js";

export interface EventInput {
  op: string;
  path: string;
  oldHash: Hash | null;
  newHash: Hash | null;
  actor: string;
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
