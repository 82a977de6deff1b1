// A plain directory on disk as a Volume (the broker's roots, an ACP session's cwd): the operations.
// Confinement (confinement.ts) decides where a path may land; writes are atomic, a temp file renamed
// (or linked) into place, under per-location locks; mutations go to a bounded event log; whole-file
// hashes of opened files are remembered per file version (keyed by its stat).
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import { AfsError } from "../../core/errors.js";
import type { EventRecord } from "../../core/event.js";
import { type Hash, sha256 } from "../../core/hash.js";
import { KeyedLock } from "../../core/keyed-lock.js";
import { WeightedLru } from "../../core/lru.js";
import { joinPath, normalizePath, ROOT } from "../../core/paths.js";
import {
  alreadyExists,
  changed,
  existingDirectory,
  isDirectory,
  moveIntoItself,
  nonEmptyDirectory,
  notADirectory,
  notADirectoryThere,
  notFound,
  targetExists,
} from "../errors.js";
import { EventLog } from "../event-log.js";
import type { MutationResult, OpenFile, Stat, Volume, WriteOptions } from "../volume.js";
import { Confinement } from "./confinement.js";
import { hashFileOrNull, lstatOrNull, makeDirs, moveEntry, TEMP_NAME, toStat, writeTemp } from "./disk.js";
import { fsError } from "./errno.js";
import { handleFile } from "./open-file.js";

/** Whole-file hashes remembered per volume: enough for the files a client reads in parts at once. */
const HASHES_KEPT = 256;

/** One mutation, as a workspace would log it (minus the workspace name). */
export type LocalDirEvent = Omit<EventRecord, "workspace">;

export interface LocalDirOptions {
  /** Recorded on every event; default "local". */
  actor?: string;
  /** Recorded on every event beside the actor; default "local". */
  surface?: string;
  /** How many of the newest events the log keeps (default 10,000); the revision counts on regardless. */
  maxEvents?: number;
}

export class LocalDirVolume implements Volume {
  readonly label: string;
  private readonly actor: string;
  private readonly surface: string;
  private readonly confined: Confinement;
  private readonly log: EventLog<LocalDirEvent>;
  private readonly locks = new KeyedLock();
  /**
   * SHA-256 of opened files by version: path, size, mtime, and inode and ctime (which change when a
   * file is replaced or written in place), so a file read in chunks is hashed once, not per chunk.
   */
  private readonly hashes = new WeightedLru<string, Hash>(HASHES_KEPT, () => 1);

  /** The root is resolved (fs.realpath) on first use; `open` does it up front and reports a bad root. */
  constructor(root: string, options: LocalDirOptions = {}) {
    this.confined = new Confinement(root);
    this.label = this.confined.label;
    this.actor = options.actor ?? "local";
    this.surface = options.surface ?? "local";
    this.log = new EventLog({ maxEvents: options.maxEvents });
  }

  static async open(root: string, options: LocalDirOptions = {}): Promise<LocalDirVolume> {
    const volume = new LocalDirVolume(root, options);
    await volume.confined.root();
    return volume;
  }

  /** The revision after the latest mutation (0 before any). */
  get revision(): number {
    return this.log.revision;
  }

  /** The oldest event still kept; a reader that last saw seq n missed some when n + 1 < oldestSeq. */
  get oldestSeq(): number {
    return this.log.oldestSeq;
  }

  /** Mutations made through this volume object, oldest first, after sequence number `afterSeq` (the newest maxEvents only). */
  events(afterSeq = 0): readonly LocalDirEvent[] {
    return this.log.events(afterSeq);
  }

  // --- reads -----------------------------------------------------------------------------------

  async stat(path: string): Promise<Stat | null> {
    const p = normalizePath(path);
    const entry = await this.confined.entryLocation(p);
    const st = await lstatOrNull(entry);
    return st ? toStat(p, entry, st, true) : null;
  }

  async readFile(path: string): Promise<Buffer> {
    const { fh } = await this.openRegular(path);
    try {
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  }

  async openFile(path: string): Promise<OpenFile> {
    const { fh, size, mtime, version } = await this.openRegular(path);
    return handleFile(fh, size, mtime, async (compute) => {
      const known = this.hashes.get(version);
      if (known) return known;
      const hash = await compute();
      this.hashes.set(version, hash);
      return hash;
    });
  }

  /** Where `path` really lands, symlinks followed (`entry`: only its parent's); PERMISSION_DENIED outside. */
  async realPath(path: string, options: { entry?: boolean } = {}): Promise<string> {
    const p = normalizePath(path);
    const real = options.entry ? await this.confined.entryLocation(p) : await this.confined.locate(p);
    return this.confined.volumePath(real);
  }

  /** Opens a regular file inside the volume for reading; the caller closes it. `version` keys its hash. */
  private async openRegular(
    path: string,
  ): Promise<{ fh: fsp.FileHandle; size: number; mtime: number; version: string }> {
    const p = normalizePath(path);
    const real = await this.confined.locate(p);
    // O_NOFOLLOW: if the checked location was swapped for a symlink since, refuse rather than follow
    // it; O_NONBLOCK: opening a FIFO must not hang (it is refused below).
    const fh = await fsp.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((e) => {
      throw fsError(e, p, { ENOTDIR: ["NOT_FOUND", `${p} does not exist (a parent is not a directory)`] });
    });
    try {
      const st = await fh.stat();
      if (st.isDirectory()) throw isDirectory(p);
      if (!st.isFile()) throw new AfsError("INVALID_ARGUMENT", `${p} is not a regular file`, { path: p });
      const version = `${real}\0${st.size}\0${st.mtimeMs}\0${st.dev}:${st.ino}\0${st.ctimeMs}`;
      return { fh, size: st.size, mtime: st.mtimeMs, version };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  async list(path: string): Promise<Stat[]> {
    const p = normalizePath(path);
    const real = await this.confined.locate(p);
    const names = await fsp.readdir(real).catch((e) => {
      throw fsError(e, p, { ENOTDIR: ["INVALID_ARGUMENT", notADirectory(p).message] });
    });
    const stats = await Promise.all(
      names
        .filter((n) => !TEMP_NAME.test(n))
        .map(async (name) => {
          const st = await lstatOrNull(join(real, name));
          return st ? toStat(joinPath(p, name), join(real, name), st, false) : null;
        }),
    );
    return stats.filter((s): s is Stat => s !== null);
  }

  async *walk(path: string, maxDepth = Number.POSITIVE_INFINITY): AsyncIterable<Stat> {
    const p = normalizePath(path);
    const real = await this.confined.locate(p);
    const top = await lstatOrNull(real);
    if (!top) throw notFound(p);
    if (!top.isDirectory()) return;
    yield* this.walkDir(p, real, 1, maxDepth);
  }

  private async *walkDir(p: string, real: string, depth: number, maxDepth: number): AsyncIterable<Stat> {
    let names: string[];
    try {
      names = (await fsp.readdir(real)).filter((n) => !TEMP_NAME.test(n)).sort();
    } catch {
      return; // removed (or replaced) while walking: nothing below it any more
    }
    for (const name of names) {
      const child = join(real, name);
      const st = await lstatOrNull(child);
      if (!st) continue;
      const vpath = joinPath(p, name);
      yield await toStat(vpath, child, st, false);
      // Directories only, never symlinks: a walk stays inside the tree and cannot loop.
      if (st.isDirectory() && depth < maxDepth) yield* this.walkDir(vpath, child, depth + 1, maxDepth);
    }
  }

  // --- writes ----------------------------------------------------------------------------------

  async writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult> {
    const p = normalizePath(path);
    if (p === ROOT) throw isDirectory(p);
    // create_exclusive claims the name itself: even a dangling symlink there counts as taken.
    if (options.expectSha256 === null && (await lstatOrNull(await this.confined.entryLocation(p))))
      throw alreadyExists(p);
    // Writes go through a symlink to its target, like any program writing to a symlinked file.
    const real = await this.confined.locate(p);
    const target = await this.confined.volumePath(real);
    return this.locks.run([real], async () => {
      const before = await lstatOrNull(real);
      if (before?.isDirectory()) throw isDirectory(target);
      if (before && !before.isFile()) {
        throw new AfsError("INVALID_ARGUMENT", `${target} is not a regular file; delete it first`, { path: target });
      }
      if (options.expectSha256 === null && before) throw alreadyExists(target);
      if (typeof options.expectSha256 === "string" && !before) throw notFound(target);
      await makeDirs(dirname(real), target);
      const mode = before ? before.mode & 0o7777 : options.mode;
      const temp = await writeTemp(dirname(real), data, mode);
      let oldHash: Hash | null = null;
      let placed = false;
      try {
        if (options.expectSha256 === null) {
          // link() fails if anything appeared at the name meanwhile, even from another process:
          // exactly one creator wins, and the name only ever shows the complete content.
          await fsp.link(temp, real).catch((e) => {
            throw fsError(e, target, { EEXIST: ["ALREADY_EXISTS", alreadyExists(target).message] });
          });
        } else {
          oldHash = before ? await hashFileOrNull(real, target) : null;
          if (typeof options.expectSha256 === "string") {
            if (oldHash === null) throw notFound(target);
            if (oldHash !== options.expectSha256) throw changed(target, options.expectSha256, oldHash);
          }
          // The hash was checked under this process's lock for the path; another process writing
          // between the check and this rename can still be overwritten (a plain directory has no
          // cross-process compare-and-swap). A versioned workspace closes that window.
          await fsp.rename(temp, real).catch((e) => {
            throw fsError(e, target);
          });
          placed = true;
        }
      } finally {
        // A renamed temp file is gone already; a linked one (or one left by a failure) is not.
        if (!placed) await fsp.rm(temp, { force: true });
      }
      const hash = sha256(data);
      const revision = this.record(options.op, target, oldHash, hash);
      return { path: target, kind: "file", size: data.length, sha256: hash, revision };
    });
  }

  async mkdir(path: string): Promise<MutationResult> {
    const p = normalizePath(path);
    const real = await this.confined.locate(p);
    const target = await this.confined.volumePath(real);
    return this.locks.run([real], async () => {
      const st = await lstatOrNull(real);
      if (st?.isDirectory()) return { path: target, kind: "dir", size: 0, sha256: null, revision: this.revision };
      if (st) throw notADirectoryThere(target);
      await makeDirs(real, target);
      const revision = this.record("mkdir", target, null, null);
      return { path: target, kind: "dir", size: 0, sha256: null, revision };
    });
  }

  async remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult> {
    const p = normalizePath(path);
    if (p === ROOT) throw new AfsError("INVALID_ARGUMENT", `cannot delete the root of ${this.label}`, { path: p });
    // The entry itself is removed, never what a symlink points to: only its parent must be inside.
    const entry = await this.confined.entryLocation(p);
    const target = await this.confined.volumePath(entry);
    return this.locks.run([entry], async () => {
      const st = await lstatOrNull(entry);
      if (!st) throw notFound(p);
      let oldHash: Hash | null = null;
      if (st.isDirectory()) {
        await (options.recursive ? fsp.rm(entry, { recursive: true }) : fsp.rmdir(entry)).catch((e) => {
          throw fsError(e, target, {
            ENOTEMPTY: ["INVALID_ARGUMENT", nonEmptyDirectory(target).message],
          });
        });
      } else {
        oldHash = st.isSymbolicLink() ? sha256(await fsp.readlink(entry)) : await hashFileOrNull(entry, target);
        if (options.expectSha256 !== undefined && oldHash !== options.expectSha256) {
          throw changed(target, options.expectSha256, oldHash ?? "(unreadable)");
        }
        await fsp.unlink(entry).catch((e) => {
          throw fsError(e, target);
        });
      }
      const revision = this.record("delete", target, oldHash, null);
      return { path: target, kind: "deleted", size: 0, sha256: null, revision };
    });
  }

  async rename(from: string, to: string, options: { overwrite?: boolean }): Promise<MutationResult> {
    const src = normalizePath(from);
    const dst = normalizePath(to);
    if (src === ROOT || dst === ROOT) throw new AfsError("INVALID_ARGUMENT", `cannot rename the root of ${this.label}`);
    // Both names are entries (a symlink moves as itself), so only their parents must be inside.
    const srcEntry = await this.confined.entryLocation(src);
    const dstEntry = await this.confined.entryLocation(dst);
    const [srcPath, dstPath] = [await this.confined.volumePath(srcEntry), await this.confined.volumePath(dstEntry)];
    if (dstEntry.startsWith(srcEntry + sep)) {
      throw moveIntoItself(srcPath, dstPath, { path: src, new_path: dst });
    }
    return this.locks.run([srcEntry, dstEntry], async () => {
      const st = await lstatOrNull(srcEntry);
      if (!st) throw notFound(src);
      const kind = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "file";
      const hash =
        kind === "dir"
          ? null
          : kind === "symlink"
            ? sha256(await fsp.readlink(srcEntry))
            : await hashFileOrNull(srcEntry, srcPath);
      const size = kind === "dir" ? 0 : kind === "symlink" ? Buffer.byteLength(await fsp.readlink(srcEntry)) : st.size;
      if (srcEntry === dstEntry) return { path: dstPath, kind, size, sha256: hash, revision: this.revision };

      const existing = await lstatOrNull(dstEntry);
      if (existing?.isDirectory()) {
        throw existingDirectory(dstPath);
      }
      if (existing && !options.overwrite) {
        throw targetExists(dstPath);
      }
      const replacedHash = existing
        ? existing.isSymbolicLink()
          ? sha256(await fsp.readlink(dstEntry))
          : await hashFileOrNull(dstEntry, dstPath)
        : null;
      await makeDirs(dirname(dstEntry), dstPath);
      await moveEntry(srcEntry, dstEntry, kind, existing !== null, dstPath).catch((e) => {
        throw fsError(e, dstPath);
      });
      this.record("rename", srcPath, hash, null);
      const revision = this.record("rename", dstPath, replacedHash, hash);
      return { path: dstPath, kind, size, sha256: hash, revision };
    });
  }

  private record(op: string, path: string, oldHash: Hash | null, newHash: Hash | null): number {
    return this.log.append({ op, path, oldHash, newHash, actor: this.actor, surface: this.surface, time: Date.now() });
  }
}
