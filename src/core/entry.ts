// What a path holds: the entry shape shared by trees, the live overlay and volumes.
import type { Hash } from "./hash.js";

export const ENTRY_KINDS = ["file", "dir", "symlink"] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/**
 * One node of a tree. `hash` names a blob for a file (its bytes) and a symlink (its target
 * text), and a tree for a directory. `mtime` is milliseconds since the epoch.
 */
export interface Entry {
  kind: EntryKind;
  hash: Hash;
  size: number;
  mode: number;
  mtime: number;
}

export interface NamedEntry extends Entry {
  name: string;
}

export const FILE_MODE = 0o644;
export const EXEC_MODE = 0o755;
export const DIR_MODE = 0o755;
export const SYMLINK_MODE = 0o777;

export const sameEntry = (a: Entry | null | undefined, b: Entry | null | undefined): boolean =>
  a === b ||
  (!!a &&
    !!b &&
    a.kind === b.kind &&
    a.hash === b.hash &&
    a.size === b.size &&
    a.mode === b.mode &&
    a.mtime === b.mtime);
