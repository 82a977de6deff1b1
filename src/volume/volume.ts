// A Volume is a tree of files the operations run on: a versioned workspace or a plain directory.
// Every mutation is atomic and reports what it did; every path argument is already normalized.
import type { EntryKind } from "../core/entry.js";
import type { Hash } from "../core/hash.js";

export interface Stat {
  path: string;
  name: string;
  kind: EntryKind;
  /** Bytes for a file, target length for a symlink, 0 for a directory. */
  size: number;
  /** Content hash for a file, hash of the target text for a symlink, absent for a directory. */
  sha256?: Hash;
  mode: number;
  /** Milliseconds since the epoch. */
  mtime: number;
  /** Only for symlinks. */
  target?: string;
}

export interface MutationResult {
  path: string;
  kind: EntryKind | "deleted";
  size: number;
  sha256: Hash | null;
  /** The volume's revision after this mutation (a workspace's event sequence number). */
  revision: number;
}

export interface WriteOptions {
  /** Operation name recorded in the event log ("write", "replace", "patch", …). */
  op: string;
  /**
   * Precondition checked atomically with the write: a hash means the file must currently have
   * exactly that content; null means nothing may exist at the path (create-exclusive).
   * Failing it throws CONFLICT (or ALREADY_EXISTS for null).
   */
  expectSha256?: Hash | null;
  /** File mode for a new file; an existing file keeps its mode. */
  mode?: number;
}

/**
 * A file opened for reading in parts: a window of lines or a byte range of a file of any size is
 * read without holding the rest. Every read of one OpenFile sees the same content (a workspace
 * reads one stored version; a directory keeps the opened file, which afs's atomic writes replace
 * rather than change; only another program writing in place can change what it holds). Close it.
 */
export interface OpenFile {
  /** Bytes, as the file had when opened. */
  readonly size: number;
  /** The content hash when the volume knows it without reading the file (a workspace). */
  readonly sha256?: Hash;
  /** A file on disk: its modification time when opened (ms since the epoch). */
  readonly mtime?: number;
  /**
   * The whole file's SHA-256 as opened: `sha256` when the volume knows it, else read through (a
   * directory volume remembers it per version of the file, so a file read in parts is hashed once).
   */
  hash(): Promise<Hash>;
  /** Up to `length` bytes from `offset` (fewer at the end, none past it). */
  read(offset: number, length: number): Promise<Buffer>;
  /** The bytes in order, a few MiB at a time; each piece is the caller's to keep. */
  stream(): AsyncIterable<Buffer>;
  close(): Promise<void>;
}

export interface Volume {
  /** Human-readable name for messages: "workspace demo", "directory /srv/data". */
  readonly label: string;

  /** lstat semantics: a symlink is reported, not followed. Null when nothing is there. */
  stat(path: string): Promise<Stat | null>;
  /** Bytes of a file (symlinks are followed inside the volume). NOT_FOUND / INVALID_ARGUMENT for a directory. */
  readFile(path: string): Promise<Buffer>;
  /** Opens a file (symlinks followed, like readFile, with the same errors) for ranged and streamed reads. */
  openFile(path: string): Promise<OpenFile>;
  /**
   * Optional: the bytes of the file `stat` (from this volume's stat) describes, read by what the
   * stat already resolved rather than by its path again.
   */
  readContent?(stat: Stat): Promise<Buffer>;
  /**
   * Optional: the path where `path` really lands inside the volume, symlinks followed (with `entry`,
   * only its parent's: the entry itself, as remove and rename take it). PERMISSION_DENIED when that
   * is outside the volume. A directory has it; a workspace's symlinks cannot leave it.
   */
  realPath?(path: string, options?: { entry?: boolean }): Promise<string>;
  /** Direct children of a directory, in no particular order. */
  list(path: string): Promise<Stat[]>;
  /** Every entry below `path` (not `path` itself), depth-first, up to `maxDepth` levels (Infinity = all). The Stats may be shared with later walks: read them, do not modify them. */
  walk(path: string, maxDepth?: number): AsyncIterable<Stat>;
  /**
   * Optional: everything `walk(path)` yields, as one array that stays the same array while nothing
   * below `path` changes, so a caller may key what it works out from it on the array (grep does).
   */
  walkList?(path: string): Promise<readonly Stat[]>;
  /**
   * Optional: the stored tree directory `path` lists as, but for the live changes below it, whose
   * paths `changed` names (each stands for its whole subtree: what is at or below it is read live).
   * What is derived from the tree (grep's per-tree map of contents to paths) then holds for every
   * other path below `path`. Null for anything but a directory.
   */
  storedBase?(path: string): Promise<{ tree: Hash; changed: readonly string[] } | null>;
  /**
   * Optional: for grep, when the index has no map of storedBase's tree: a tree it has one of (`mapped`)
   * that holds `path`'s files, now or at one of the few checkpoints before the head: `path` itself or
   * a directory above it (`under`: where `path` is inside that tree, "" for the tree itself), with
   * `changed` naming what differs below `path` since then (read live). Lets grep answer from an earlier
   * or enclosing map in O(changes) instead of listing. Null when none qualifies, or too much changed.
   */
  priorBase?(
    path: string,
    mapped: (tree: Hash) => boolean,
  ): Promise<{ tree: Hash; under: string; changed: readonly string[] } | null>;

  /** Writes a file, creating missing parent directories. Refuses to write over a directory. */
  writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult>;
  /** Creates a directory and any missing parents; an existing directory is not an error. */
  mkdir(path: string): Promise<MutationResult>;
  /** Deletes a file, symlink or directory (a non-empty directory only with `recursive`). */
  remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult>;
  /** Moves a file, symlink or directory. The target must not exist unless `overwrite` (never over a directory). */
  rename(from: string, to: string, options: { overwrite?: boolean }): Promise<MutationResult>;
}

/** Runs `fn` on the opened file and closes it however `fn` ends. */
export async function withOpenFile<T>(volume: Volume, path: string, fn: (file: OpenFile) => Promise<T>): Promise<T> {
  const file = await volume.openFile(path);
  try {
    return await fn(file);
  } finally {
    await file.close();
  }
}
