// A plain directory on disk as a Volume (the broker's roots, an ACP session's cwd). Confinement
// lives here: every path is resolved to where it really lands, symlinks included, and refused
// unless that place is inside the root. Writes are atomic: a temp file renamed (or linked) into place.
import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { AfsError, type ErrorCode, toAfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { baseName, joinPath, normalizePath, parentOf, ROOT, segments } from "../core/paths.js";
import type { EventRecord } from "../store/store.js";
import type { MutationResult, Stat, Volume, WriteOptions } from "./volume.js";

/** One mutation, as a workspace would log it (minus the workspace name). */
export type LocalDirEvent = Omit<EventRecord, "workspace">;

const MAX_SYMLINK_HOPS = 40;
// In-flight temp files: named so list and walk can hide them.
const TEMP_NAME = /^\.afs-[0-9a-f]{16}\.tmp$/;
const tempName = (): string => `.afs-${randomBytes(8).toString("hex")}.tmp`;

export class LocalDirVolume implements Volume {
  readonly label: string;
  private readonly actor: string;
  private readonly given: string;
  private rootPromise: Promise<string> | null = null;
  private readonly log: LocalDirEvent[] = [];
  private readonly locks = new Map<string, Promise<void>>();

  /** The root is resolved (fs.realpath) on first use; `open` does it up front and reports a bad root. */
  constructor(root: string, options: { actor?: string } = {}) {
    this.given = resolve(root);
    this.label = `directory ${this.given}`;
    this.actor = options.actor ?? "local";
  }

  static async open(root: string, options: { actor?: string } = {}): Promise<LocalDirVolume> {
    const volume = new LocalDirVolume(root, options);
    await volume.root();
    return volume;
  }

  /** The revision after the latest mutation (0 before any). */
  get revision(): number {
    return this.log.length;
  }

  /** Mutations made through this volume object, oldest first, after sequence number `afterSeq`. */
  events(afterSeq = 0): readonly LocalDirEvent[] {
    return this.log.slice(Math.max(0, afterSeq));
  }

  // --- reads -----------------------------------------------------------------------------------

  async stat(path: string): Promise<Stat | null> {
    const p = normalizePath(path);
    const entry = await this.entryLocation(p);
    const st = await lstatOrNull(entry);
    return st ? this.toStat(p, entry, st, true) : null;
  }

  async readFile(path: string): Promise<Buffer> {
    const p = normalizePath(path);
    const real = await this.locate(p);
    // O_NOFOLLOW: if the checked location was swapped for a symlink since, refuse rather than follow
    // it; O_NONBLOCK: opening a FIFO must not hang (it is refused below).
    const fh = await fsp.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((e) => {
      throw fsError(e, p, { ENOTDIR: ["NOT_FOUND", `${p} does not exist (a parent is not a directory)`] });
    });
    try {
      const st = await fh.stat();
      if (st.isDirectory()) throw isDirectory(p);
      if (!st.isFile()) throw new AfsError("INVALID_ARGUMENT", `${p} is not a regular file`, { path: p });
      return await fh.readFile();
    } finally {
      await fh.close();
    }
  }

  async list(path: string): Promise<Stat[]> {
    const p = normalizePath(path);
    const real = await this.locate(p);
    const names = await fsp.readdir(real).catch((e) => {
      throw fsError(e, p, { ENOTDIR: ["INVALID_ARGUMENT", `${p} is not a directory`] });
    });
    const stats = await Promise.all(
      names
        .filter((n) => !TEMP_NAME.test(n))
        .map(async (name) => {
          const st = await lstatOrNull(join(real, name));
          return st ? this.toStat(joinPath(p, name), join(real, name), st, false) : null;
        }),
    );
    return stats.filter((s): s is Stat => s !== null);
  }

  async *walk(path: string, maxDepth = Number.POSITIVE_INFINITY): AsyncIterable<Stat> {
    const p = normalizePath(path);
    const real = await this.locate(p);
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
      yield await this.toStat(vpath, child, st, false);
      // Directories only, never symlinks: a walk stays inside the tree and cannot loop.
      if (st.isDirectory() && depth < maxDepth) yield* this.walkDir(vpath, child, depth + 1, maxDepth);
    }
  }

  // --- writes ----------------------------------------------------------------------------------

  async writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult> {
    const p = normalizePath(path);
    if (p === ROOT) throw isDirectory(p);
    // create_exclusive claims the name itself: even a dangling symlink there counts as taken.
    if (options.expectSha256 === null && (await lstatOrNull(await this.entryLocation(p)))) throw alreadyExists(p);
    // Writes go through a symlink to its target, like any program writing to a symlinked file.
    const real = await this.locate(p);
    const target = await this.volumePath(real);
    return this.withLocks([real], async () => {
      const before = await lstatOrNull(real);
      if (before?.isDirectory()) throw isDirectory(target);
      if (before && !before.isFile()) {
        throw new AfsError("INVALID_ARGUMENT", `${target} is not a regular file; delete it first`, { path: target });
      }
      if (options.expectSha256 === null && before) throw alreadyExists(target);
      if (typeof options.expectSha256 === "string" && !before) throw notFound(target);
      await this.makeDirs(dirname(real), target);
      const mode = before ? before.mode & 0o7777 : options.mode;
      const temp = await writeTemp(dirname(real), data, mode);
      let oldHash: Hash | null = null;
      try {
        if (options.expectSha256 === null) {
          // link() fails if anything appeared at the name meanwhile, even from another process:
          // exactly one creator wins, and the name only ever shows the complete content.
          await fsp.link(temp, real).catch((e) => {
            throw fsError(e, target, { EEXIST: ["ALREADY_EXISTS", alreadyExists(target).message] });
          });
        } else {
          oldHash = before ? await hashFileOrNull(real) : null;
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
        }
      } finally {
        await fsp.rm(temp, { force: true });
      }
      const hash = sha256(data);
      const revision = this.record(options.op, target, oldHash, hash);
      return { path: target, kind: "file", size: data.length, sha256: hash, revision };
    });
  }

  async mkdir(path: string): Promise<MutationResult> {
    const p = normalizePath(path);
    const real = await this.locate(p);
    const target = await this.volumePath(real);
    return this.withLocks([real], async () => {
      const st = await lstatOrNull(real);
      if (st?.isDirectory()) return { path: target, kind: "dir", size: 0, sha256: null, revision: this.revision };
      if (st) throw new AfsError("ALREADY_EXISTS", `${target} already exists and is not a directory`, { path: target });
      await this.makeDirs(real, target);
      const revision = this.record("mkdir", target, null, null);
      return { path: target, kind: "dir", size: 0, sha256: null, revision };
    });
  }

  async remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult> {
    const p = normalizePath(path);
    if (p === ROOT) throw new AfsError("INVALID_ARGUMENT", `cannot delete the root of ${this.label}`, { path: p });
    // The entry itself is removed, never what a symlink points to: only its parent must be inside.
    const entry = await this.entryLocation(p);
    const target = await this.volumePath(entry);
    return this.withLocks([entry], async () => {
      const st = await lstatOrNull(entry);
      if (!st) throw notFound(p);
      let oldHash: Hash | null = null;
      if (st.isDirectory()) {
        await (options.recursive ? fsp.rm(entry, { recursive: true }) : fsp.rmdir(entry)).catch((e) => {
          throw fsError(e, target, {
            ENOTEMPTY: [
              "INVALID_ARGUMENT",
              `${target} is a non-empty directory; pass recursive to delete it with its contents`,
            ],
          });
        });
      } else {
        oldHash = st.isSymbolicLink() ? sha256(await fsp.readlink(entry)) : await hashFileOrNull(entry);
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
    const srcEntry = await this.entryLocation(src);
    const dstEntry = await this.entryLocation(dst);
    const [srcPath, dstPath] = [await this.volumePath(srcEntry), await this.volumePath(dstEntry)];
    if (dstEntry.startsWith(srcEntry + sep)) {
      throw new AfsError("INVALID_ARGUMENT", `cannot move ${srcPath} into itself (${dstPath})`, {
        path: src,
        new_path: dst,
      });
    }
    return this.withLocks([srcEntry, dstEntry], async () => {
      const st = await lstatOrNull(srcEntry);
      if (!st) throw notFound(src);
      const kind = st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "file";
      const hash =
        kind === "dir"
          ? null
          : kind === "symlink"
            ? sha256(await fsp.readlink(srcEntry))
            : await hashFileOrNull(srcEntry);
      const size = kind === "dir" ? 0 : kind === "symlink" ? Buffer.byteLength(await fsp.readlink(srcEntry)) : st.size;
      if (srcEntry === dstEntry) return { path: dstPath, kind, size, sha256: hash, revision: this.revision };

      const existing = await lstatOrNull(dstEntry);
      if (existing?.isDirectory()) {
        throw new AfsError("ALREADY_EXISTS", `${dstPath} is an existing directory; rename never replaces a directory`, {
          path: dstPath,
        });
      }
      if (existing && !options.overwrite) {
        throw new AfsError("ALREADY_EXISTS", `${dstPath} already exists; pass overwrite to replace it`, {
          path: dstPath,
        });
      }
      const replacedHash = existing
        ? existing.isSymbolicLink()
          ? sha256(await fsp.readlink(dstEntry))
          : await hashFileOrNull(dstEntry)
        : null;
      await this.makeDirs(dirname(dstEntry), dstPath);
      await this.move(srcEntry, dstEntry, kind, existing !== null, dstPath).catch((e) => {
        throw fsError(e, dstPath);
      });
      this.record("rename", srcPath, hash, null);
      const revision = this.record("rename", dstPath, replacedHash, hash);
      return { path: dstPath, kind, size, sha256: hash, revision };
    });
  }

  /** Moves an entry without ever silently dropping a file that appeared at the target. */
  private async move(src: string, dst: string, kind: Stat["kind"], replace: boolean, dstPath: string): Promise<void> {
    if (replace) {
      // Only files and symlinks get here (a directory target was refused); rename(2) replaces a
      // file atomically, but not with a directory, so that case clears the target first.
      if (kind === "dir") await fsp.unlink(dst);
      await fsp.rename(src, dst);
      return;
    }
    if (kind === "file") {
      // link() refuses an existing name atomically, even against other processes.
      try {
        await fsp.link(src, dst);
        await fsp.unlink(src);
        return;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") {
          throw new AfsError("ALREADY_EXISTS", `${dstPath} already exists; pass overwrite to replace it`, {
            path: dstPath,
          });
        }
        // Filesystems without hard links fall through to rename, checked under the lock only.
        if (code !== "EPERM" && code !== "EXDEV" && code !== "ENOTSUP" && code !== "EMLINK") throw e;
      }
    }
    // Directories and symlinks: no portable no-replace rename in Node, so the target was checked
    // under this process's lock; another process creating it in between is the remaining window.
    await fsp.rename(src, dst);
  }

  // --- confinement -----------------------------------------------------------------------------

  private root(): Promise<string> {
    this.rootPromise ??= (async () => {
      const real = await fsp.realpath(this.given).catch((e) => {
        throw fsError(e, this.given);
      });
      const st = await fsp.stat(real);
      if (!st.isDirectory()) throw new AfsError("INVALID_ARGUMENT", `${this.given} is not a directory`);
      return real;
    })();
    return this.rootPromise;
  }

  private async host(p: string): Promise<string> {
    return join(await this.root(), ...segments(p));
  }

  /**
   * Where a path really lands with every symlink followed (dangling ones too, so a write cannot
   * create a file through a link that points outside). Refuses anything outside the root.
   */
  private async locate(p: string): Promise<string> {
    const real = await landing(await this.host(p), 0, p);
    await this.confine(real, p);
    return real;
  }

  /** The location of the entry itself (lstat semantics): its parent resolved, its name kept. */
  private async entryLocation(p: string): Promise<string> {
    if (p === ROOT) return this.root();
    return join(await this.locate(parentOf(p)), baseName(p));
  }

  private async confine(real: string, p: string): Promise<void> {
    const root = await this.root();
    if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) return;
    throw new AfsError(
      "PERMISSION_DENIED",
      `${p} resolves outside ${this.label} (through a symbolic link); only paths inside it can be used`,
      { path: p },
    );
  }

  private async volumePath(real: string): Promise<string> {
    const rel = relative(await this.root(), real);
    return rel === "" ? ROOT : `/${rel.split(sep).join("/")}`;
  }

  private async makeDirs(real: string, p: string): Promise<void> {
    await fsp.mkdir(real, { recursive: true }).catch((e) => {
      throw fsError(e, p, {
        ENOTDIR: ["INVALID_PATH", `a parent of ${p} is a file, so ${p} cannot be created under it`],
        EEXIST: ["INVALID_PATH", `a parent of ${p} is a file, so ${p} cannot be created under it`],
      });
    });
  }

  private async toStat(p: string, real: string, st: Stats, withHash: boolean): Promise<Stat> {
    const base = { path: p, name: baseName(p), mode: st.mode & 0o7777, mtime: st.mtimeMs };
    if (st.isDirectory()) return { ...base, kind: "dir", size: 0 };
    if (st.isSymbolicLink()) {
      const target = await fsp.readlink(real);
      return { ...base, kind: "symlink", size: Buffer.byteLength(target), sha256: sha256(target), target };
    }
    // Hashing reads the file, so only stat (one path) does it; list and walk leave it out.
    const hash = withHash && st.isFile() ? await hashFileOrNull(real) : null;
    return hash ? { ...base, kind: "file", size: st.size, sha256: hash } : { ...base, kind: "file", size: st.size };
  }

  // --- bookkeeping -----------------------------------------------------------------------------

  private record(op: string, path: string, oldHash: Hash | null, newHash: Hash | null): number {
    const seq = this.log.length + 1;
    this.log.push({ seq, op, path, oldHash, newHash, actor: this.actor, time: Date.now() });
    return seq;
  }

  /** Serializes mutations of the same locations within this process (keys taken in sorted order). */
  private async withLocks<T>(keys: string[], fn: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.lock(key));
      return await fn();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  private async lock(key: string): Promise<() => void> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    let release = (): void => {};
    const mine = new Promise<void>((done) => {
      release = done;
    });
    const tail = previous.then(() => mine);
    this.locks.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.locks.get(key) === tail) this.locks.delete(key);
    };
  }
}

/**
 * Resolves `host` as the kernel would for a write: realpath when it exists; otherwise the deepest
 * existing prefix, following it by hand when it is a dangling symlink, plus the missing rest.
 */
async function landing(host: string, hops: number, p: string): Promise<string> {
  try {
    return await fsp.realpath(host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw fsError(e, p);
  }
  let prefix = host;
  const missing: string[] = [];
  let st = await lstatOrNull(prefix);
  while (!st) {
    const parent = dirname(prefix);
    if (parent === prefix) throw notFound(p);
    missing.unshift(basename(prefix));
    prefix = parent;
    st = await lstatOrNull(prefix);
  }
  // ".." after a missing directory cannot be walked by the kernel either.
  if (missing.includes("..")) throw notFound(p);
  if (!st.isSymbolicLink()) return join(await fsp.realpath(prefix), ...missing);
  if (hops >= MAX_SYMLINK_HOPS)
    throw new AfsError("INVALID_PATH", `too many levels of symbolic links at ${p}`, { path: p });
  const link = await fsp.readlink(prefix);
  // A relative target is read from the link's real directory, untouched, so ".." means what the kernel means.
  const next = link.startsWith("/") ? link : `${await fsp.realpath(dirname(prefix))}/${link}`;
  return landing(missing.length > 0 ? `${next}/${missing.join("/")}` : next, hops + 1, p);
}

async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fsp.lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

async function hashFileOrNull(path: string): Promise<Hash | null> {
  try {
    return sha256(await fsp.readFile(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

async function writeTemp(dir: string, data: Uint8Array, mode: number | undefined): Promise<string> {
  const temp = join(dir, tempName());
  const fh = await fsp.open(temp, "wx", mode ?? 0o666);
  try {
    await fh.writeFile(data);
    // An existing file keeps its mode exactly (the umask only shapes brand-new files).
    if (mode !== undefined) await fh.chmod(mode);
    await fh.sync();
  } catch (e) {
    await fh.close();
    await fsp.rm(temp, { force: true });
    throw e;
  }
  await fh.close();
  return temp;
}

// errno codes toAfsError leaves as IO_ERROR but that mean something specific here.
const EXTRA_CODES: Record<string, [ErrorCode, string]> = {
  ELOOP: ["INVALID_PATH", "too many levels of symbolic links (or a symlink appeared mid-operation)"],
  ENAMETOOLONG: ["INVALID_PATH", "name too long"],
  EINVAL: ["INVALID_ARGUMENT", "invalid argument"],
  ENOSPC: ["QUOTA_EXCEEDED", "no space left on the device"],
  EDQUOT: ["QUOTA_EXCEEDED", "disk quota exceeded"],
  EROFS: ["PERMISSION_DENIED", "read-only file system"],
};

/** An errno error as an AfsError naming the volume path (never the host path). */
function fsError(e: unknown, p: string, overrides: Record<string, [ErrorCode, string]> = {}): AfsError {
  if (e instanceof AfsError) return e;
  const code = (e as NodeJS.ErrnoException)?.code ?? "";
  const special = overrides[code];
  if (special) return new AfsError(special[0], special[1], { path: p });
  const extra = EXTRA_CODES[code];
  if (extra) return new AfsError(extra[0], `${p}: ${extra[1]}`, { path: p });
  if (code === "ENOENT") return notFound(p);
  const mapped = toAfsError(Object.assign(new Error(String(e)), { code, path: p }));
  return new AfsError(mapped.code, mapped.message, { path: p });
}

const notFound = (p: string): AfsError => new AfsError("NOT_FOUND", `${p} does not exist`, { path: p });
const alreadyExists = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} already exists; create_exclusive never overwrites`, { path: p });
const isDirectory = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is a directory; use list to see its contents`, { path: p });
const changed = (p: string, expected: Hash, actual: Hash): AfsError =>
  new AfsError(
    "CONFLICT",
    `${p} changed since you read it (expected sha256 ${expected}, now ${actual}); read it again and retry`,
    {
      path: p,
      expected_sha256: expected,
      actual_sha256: actual,
    },
  );
