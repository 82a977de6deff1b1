// The mounted directory as the sync sees it: versions read with one lstat when the stat is the one
// last synced; writes atomic (temp file + rename in the same directory) and confined (every
// ancestor must be a real directory inside DIR, and each write goes through its directory opened
// and checked, so a symlink swapped in meanwhile is never written through).
import { randomBytes } from "node:crypto";
import {
  type BigIntStats,
  chmodSync,
  closeSync,
  constants,
  createWriteStream,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import { chmod, mkdir, readdir, readlink, rename, rm, rmdir, symlink, unlink } from "node:fs/promises";
import { extname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DIR_MODE, EXEC_MODE, FILE_MODE, SYMLINK_MODE } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import type { SyncedPath, SyncedVersion } from "../core/mount-state.js";
import { ancestors, baseName, joinPath, parentOf, ROOT, segments } from "../core/paths.js";
import { type IgnoreScope, isIgnored, isSkippedName, listDir, scopesInside } from "../volume/dir-scan.js";
import type { OpenFile } from "../volume/volume.js";
import { hashFile } from "../workspace/blob-file.js";
import { RACY_MS } from "../workspace/record.js";

/** A version on disk, with the stat that holds it ("dir" for a directory). */
export interface LocalVersion extends SyncedVersion {
  disk: string;
  /** A small file's bytes as hashed: what an upload of this version stores, without reading it again. */
  data?: Buffer;
}

/** What a placement found: the new disk stat, or "changed" when the disk moved on since it was read. */
export type Placed = { disk: string } | "changed";

/** Files up to this size are read whole: a streamed read allocates buffers of megabytes for each. */
export const SMALL_FILE = 1024 * 1024;

/** How many times a read starts over when the file vanishes under it. */
const READ_ATTEMPTS = 3;

/** The directory a write goes into vanished meanwhile: the disk moved on, the next round looks again. */
class DirGone extends Error {}

// Metadata calls and small files' reads and writes are synchronous: a stat answered from the
// kernel's cache takes ~2 µs, ~45 µs through libuv's thread pool (a small file's write ~20 µs,
// ~300 µs on a busy 2-core machine), and that wait was most of a round over 100,000 paths.
const lstatOrNull = (abs: string): Stats | null => {
  try {
    return lstatSync(abs);
  } catch {
    return null;
  }
};

const tempName = (): string => `.afs-${randomBytes(8).toString("hex")}.tmp`;

const missing = (e: unknown): boolean => {
  const code = (e as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
};

/** `NAME.conflict-HOST-TIME[-N][.EXT]`: beside the original, sorting next to it (N when taken). */
export function conflictName(name: string, host: string, now: Date, n = 1): string {
  const ext = name.startsWith(".") && name.indexOf(".", 1) < 0 ? "" : extname(name);
  const stem = ext ? name.slice(0, -ext.length) : name;
  const time = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stem}.conflict-${host.replace(/[^A-Za-z0-9_-]/g, "_")}-${time}${n > 1 ? `-${n}` : ""}${ext}`;
}

export class LocalDir {
  private readonly scopes = new Map<string, IgnoreScope[]>();

  /** `root` is the directory's real path. */
  constructor(readonly root: string) {}

  abs(path: string): string {
    return join(this.root, ...segments(path));
  }

  /** Ignore rules changed somewhere: read them again when next needed. */
  forgetIgnoreRules(): void {
    this.scopes.clear();
  }

  /** Whether a path is outside what syncs: .git and the like, afs temp files, .gitignore/.afsignore. */
  async ignored(path: string, isDir: boolean): Promise<boolean> {
    if (path === ROOT) return false;
    if (segments(path).some(isSkippedName)) return true;
    const rel = segments(path).join("/");
    return isIgnored(await this.scopesIn(parentOf(path)), rel, isDir);
  }

  private async scopesIn(dir: string): Promise<IgnoreScope[]> {
    const known = this.scopes.get(dir);
    if (known) return known;
    const parent = dir === ROOT ? [] : await this.scopesIn(parentOf(dir));
    const found = await scopesInside(this.abs(dir), segments(dir).join("/"), parent).catch(() => [...parent]);
    this.scopes.set(dir, found);
    return found;
  }

  /** The stat string a version is remembered by; null when nothing is there. */
  async diskStat(abs: string): Promise<string | null> {
    try {
      const st = lstatSync(abs, { bigint: true });
      return st.isDirectory() ? "dir" : `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    } catch (e) {
      if (missing(e)) return null;
      throw e;
    }
  }

  /** Whether every ancestor of `path` is a real directory (no symlink, no file) under the root. */
  private async reachable(path: string): Promise<boolean> {
    for (const a of ancestors(path)) {
      if (a === ROOT) continue;
      const st = lstatOrNull(this.abs(a));
      if (!st?.isDirectory()) return false;
    }
    return true;
  }

  /**
   * The version at `path`, or null (nothing there, an ancestor that is not a real directory, or a
   * socket or device). A stat equal to `base`'s means `base`'s version without reading the file.
   * A large file differing in size from both `base` and `other` (the workspace's) has no hash yet.
   */
  async read(path: string, base?: SyncedPath | null, other?: SyncedVersion | null): Promise<LocalVersion | null> {
    // A file removed or replaced between its lstat and the read of its content is looked at anew.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.readOnce(path, base, other);
      } catch (e) {
        if (!missing(e) || attempt >= READ_ATTEMPTS) throw e;
      }
    }
  }

  private async readOnce(
    path: string,
    base?: SyncedPath | null,
    other?: SyncedVersion | null,
  ): Promise<LocalVersion | null> {
    if (!(await this.reachable(path))) return null;
    const abs = this.abs(path);
    let st: BigIntStats;
    try {
      st = lstatSync(abs, { bigint: true });
    } catch (e) {
      if (missing(e)) return null;
      throw e;
    }
    if (st.isDirectory()) return { kind: "dir", sha256: null, size: 0, mode: DIR_MODE, disk: "dir" };
    const disk = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    // A stat match proves nothing for a file changed within the clock's coarse tick of the sync that
    // read it (git's "racily clean"): recent files are always read.
    const settled = Number(st.mtimeNs / 1_000_000n) < Date.now() - RACY_MS;
    if (base && base.disk === disk && base.kind !== "dir" && settled) return { ...versionOnly(base), disk };
    if (st.isSymbolicLink()) {
      const target = await readlink(abs);
      return { kind: "symlink", sha256: sha256(target), size: Buffer.byteLength(target), mode: SYMLINK_MODE, disk };
    }
    if (!st.isFile()) return null;
    const mode = Number(st.mode) & 0o111 ? EXEC_MODE : FILE_MODE;
    const size = Number(st.size);
    // A large file whose size is neither the synced one's nor `other`'s differs from both: its hash
    // comes from storing it (one pass over its bytes instead of two).
    const sizes = [base, other].flatMap((v) => (v?.kind === "file" ? [v.size] : []));
    if (size > SMALL_FILE && !sizes.includes(size)) return { kind: "file", sha256: null, size, mode, disk };
    return this.withFile(path, async (file, ino) => {
      // Replaced between the lstat and the open: looked at anew (read() starts over).
      if (ino !== Number(st.ino)) throw Object.assign(new Error(`${abs} was replaced`), { code: "ENOENT" });
      if (size > SMALL_FILE) return { kind: "file", sha256: await hashFile(file), size, mode, disk };
      const data = readFileSync(file);
      return { kind: "file", sha256: sha256(data), size: data.length, mode, disk, data };
    });
  }

  /**
   * Runs `fn` on the regular file at `path` opened for reading without following a symlink on the
   * way: O_NOFOLLOW for its own name, and (on Linux) the opened file must really lie at its path, so
   * an ancestor swapped for a symlink to elsewhere is never read through: nothing from outside the
   * mount is uploaded. `fn` gets a path naming the opened file itself (/proc/self/fd/N) and its
   * inode number. ENOENT when it moved meanwhile (the caller looks again).
   */
  async withFile<T>(path: string, fn: (file: string, ino: number) => Promise<T>): Promise<T> {
    const abs = this.abs(path);
    const fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      if (process.platform !== "linux") return await fn(abs, fstatSync(fd).ino);
      const pinned = `/proc/self/fd/${fd}`;
      const real = readlinkSync(pinned);
      if (real !== abs) {
        // Moved within the mount is a change the next round sees; anywhere else, a link led there.
        if (real.startsWith(`${this.root}/`)) throw Object.assign(new Error(`${abs} moved`), { code: "ENOENT" });
        throw new AfsError(
          "PERMISSION_DENIED",
          `refusing to read ${path}: it leads outside the mount (a symlink on the way); nothing outside the mount is uploaded`,
          { path },
        );
      }
      return await fn(pinned, fstatSync(fd).ino);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Every content path below `path` (a real directory), ignore rules applied, parents first. A
   * directory that cannot be listed (unreadable) is told to `unlisted` and left out with all below
   * it; without `unlisted` its error is thrown.
   */
  async below(path: string, unlisted?: (dir: string, error: unknown) => void): Promise<string[]> {
    const out: string[] = [];
    const visit = async (dir: string, scopes: readonly IgnoreScope[]): Promise<void> => {
      let listing: Awaited<ReturnType<typeof listDir>>;
      try {
        listing = await listDir(this.abs(dir), segments(dir).join("/"), scopes);
      } catch (e) {
        if (!unlisted) throw e;
        unlisted(dir, e);
        return;
      }
      const { entries, scopes: inner } = listing;
      for (const e of entries) {
        const p = joinPath(dir, e.name);
        out.push(p);
        if (e.kind === "dir") await visit(p, inner);
      }
    };
    if (path === ROOT) await visit(ROOT, []);
    else if ((await this.reachable(path)) && (await this.diskStat(this.abs(path))) === "dir") {
      await visit(path, await this.scopesIn(parentOf(path)));
    }
    return out;
  }

  /**
   * Whether the directory at `path` holds something and all of it stays local: ignored files,
   * version-control internals, directories holding only such. Like git, such a directory is no
   * content of its own (a folder removed remotely stays here for its build outputs, and is not
   * uploaded again); an empty directory is content.
   */
  async keepsOnlyIgnored(path: string): Promise<boolean> {
    const visit = async (dir: string, scopes: readonly IgnoreScope[]): Promise<boolean> => {
      const names = await readdir(this.abs(dir)).catch(() => []);
      if (names.length === 0) return false;
      const { entries, scopes: inner } = await listDir(this.abs(dir), segments(dir).join("/"), scopes);
      for (const e of entries) {
        if (e.kind !== "dir" || !(await visit(joinPath(dir, e.name), inner))) return false;
      }
      return true;
    };
    if (path === ROOT || !(await this.reachable(path)) || (await this.diskStat(this.abs(path))) !== "dir") return false;
    return visit(path, await this.scopesIn(parentOf(path)));
  }

  /**
   * Creates the missing ancestors of `path` one level at a time and returns its parent's absolute
   * path; refuses (CONFLICT) when an ancestor is a file or a symlink: nothing is written through one.
   */
  private async parentDir(path: string): Promise<string> {
    for (const a of ancestors(path)) {
      if (a === ROOT) continue;
      const abs = this.abs(a);
      const st = lstatOrNull(abs);
      if (st?.isDirectory()) continue;
      if (st) {
        throw new AfsError("CONFLICT", `${a} is not a directory on disk, so ${path} cannot be written under it`, {
          path,
        });
      }
      await this.inDir(parentOf(a), path, (dir) =>
        mkdir(join(dir, baseName(a))).catch(async (e: NodeJS.ErrnoException) => {
          if (e.code === "ENOENT") throw new DirGone(`${abs}'s directory vanished`);
          if (e.code !== "EEXIST" || !lstatSync(abs).isDirectory()) throw e;
        }),
      );
    }
    return this.abs(parentOf(path));
  }

  /**
   * Runs `fn` on the directory `dir` (a volume path) pinned: on Linux `fn` gets
   * /proc/self/fd/N of the directory opened and checked to lie at its own path inside the root,
   * so a symlink swapped in on the way afterwards cannot redirect what `fn` does (the *at() system
   * calls, which Node lacks, in effect). Elsewhere the path is checked and handed over as is.
   * PERMISSION_DENIED when the directory does not lie where it should.
   */
  private async inDir<T>(dir: string, path: string, fn: (dirAbs: string) => Promise<T>): Promise<T> {
    const dirAbs = this.abs(dir);
    const refuse = (): AfsError =>
      new AfsError(
        "PERMISSION_DENIED",
        `refusing to write ${path}: ${dirAbs} leads elsewhere (a symlink); nothing is written outside the mount`,
        { path },
      );
    if (process.platform !== "linux") {
      if (realpathSync.native(dirAbs) !== dirAbs) throw refuse();
      return fn(dirAbs);
    }
    let fd: number;
    try {
      fd = openSync(dirAbs, constants.O_RDONLY | constants.O_DIRECTORY);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOTDIR") throw refuse();
      if (code === "ENOENT") throw new DirGone(`${dirAbs} vanished`);
      throw e;
    }
    try {
      const pinned = `/proc/self/fd/${fd}`;
      if (readlinkSync(pinned) !== dirAbs) {
        // Opened through a symlink, or moved or removed since: only a link on the way now is refused.
        let now: string | null = null;
        try {
          now = realpathSync.native(dirAbs);
        } catch {}
        throw now === null || now === dirAbs ? new DirGone(`${dirAbs} moved`) : refuse();
      }
      return await fn(pinned);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Puts a file or symlink at `path` atomically, only while the disk still holds `expect` there
   * (its stat string; null: nothing). `fill` writes the new content to the temp path given.
   */
  async place(path: string, expect: string | null, fill: (temp: string) => Promise<void>): Promise<Placed> {
    return this.unlessGone("changed", async () => {
      await this.parentDir(path);
      return this.inDir(parentOf(path), path, async (dir) => {
        const abs = join(dir, baseName(path));
        const temp = join(dir, tempName());
        let renamed = false;
        try {
          // Written into the directory opened: one removed meanwhile takes no new entries (ENOENT).
          await fill(temp).catch((e: unknown) => {
            throw missing(e) ? new DirGone(`${dir} vanished`) : e;
          });
          if ((await this.diskStat(abs)) !== expect) return "changed";
          if (expect === "dir") {
            try {
              await rmdir(abs);
            } catch {
              return "changed"; // something new inside: the next round sees it
            }
          }
          try {
            renameSync(temp, abs);
            renamed = true;
          } catch (e) {
            throw missing(e) ? new DirGone(`${dir} vanished`) : e;
          }
        } finally {
          if (!renamed) await rm(temp, { force: true });
        }
        return { disk: (await this.diskStat(abs)) ?? "" };
      });
    });
  }

  /** Writes stored content (streamed) as a file with `mode`. */
  async placeFile(path: string, expect: string | null, content: OpenFile, mode: number): Promise<Placed> {
    return this.place(path, expect, async (temp) => {
      // Small content in one synchronous write: through the thread pool and a stream, its
      // machinery costs ten times what the bytes do.
      if (content.size <= SMALL_FILE) {
        writeFileSync(temp, await content.read(0, content.size), { flag: "wx", mode });
        chmodSync(temp, mode);
        return;
      }
      await pipeline(Readable.from(content.stream()), createWriteStream(temp, { flags: "wx", mode }));
      await chmod(temp, mode);
    });
  }

  placeSymlink(path: string, expect: string | null, target: string): Promise<Placed> {
    return this.place(path, expect, (temp) => symlink(target, temp));
  }

  /** Makes `path` a directory; "changed" when something else is there. */
  async makeDir(path: string): Promise<Placed> {
    return this.unlessGone("changed", async () => {
      await this.parentDir(path);
      return this.inDir(parentOf(path), path, async (dir) => {
        const abs = join(dir, baseName(path));
        try {
          await mkdir(abs);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
          if ((await this.diskStat(abs)) !== "dir") return "changed";
        }
        return { disk: "dir" };
      });
    });
  }

  /** `fn`'s result, or `gone` when a directory it writes into vanished meanwhile. */
  private async unlessGone<T>(gone: T, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof DirGone) return gone;
      throw e;
    }
  }

  /**
   * Removes `path` while the disk still holds `expect` there; a directory only when empty (what
   * stays in it, ignored files or new ones, keeps it). False when it was not removed.
   */
  async remove(path: string, expect: string): Promise<boolean> {
    if (!(await this.reachable(path))) return true;
    return this.unlessGone(true, () =>
      this.inDir(parentOf(path), path, async (dir) => {
        const abs = join(dir, baseName(path));
        const now = await this.diskStat(abs);
        if (now === null) return true;
        if (now !== expect) return false;
        try {
          if (now === "dir") await rmdir(abs);
          else await unlink(abs);
        } catch (e) {
          if (missing(e)) return true;
          const code = (e as NodeJS.ErrnoException).code;
          if (code === "ENOTEMPTY" || code === "EEXIST") return false;
          throw e;
        }
        return true;
      }),
    );
  }

  /**
   * Renames what is at `path` (the entry itself, never followed) to `to` beside it; false when
   * nothing is there any more (removed meanwhile).
   */
  async moveAside(path: string, to: string): Promise<boolean> {
    return this.unlessGone(false, () =>
      this.inDir(parentOf(path), path, (dir) =>
        rename(join(dir, baseName(path)), join(dir, baseName(to))).then(
          () => true,
          (e: unknown) => {
            if (missing(e)) return false;
            throw e;
          },
        ),
      ),
    );
  }
}

const versionOnly = (v: SyncedVersion): SyncedVersion => ({
  kind: v.kind,
  sha256: v.sha256,
  size: v.size,
  mode: v.mode,
});
