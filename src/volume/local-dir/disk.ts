// Host filesystem steps the directory volume is built from: lstat that tolerates absence, hashing,
// atomic temp files, directory creation, Stats, and a move that never silently drops a file.
import { createHash, randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import { type Hash, sha256 } from "../../core/hash.js";
import { baseName } from "../../core/paths.js";
import { targetExists } from "../errors.js";
import type { Stat } from "../volume.js";
import { fsError } from "./errno.js";
import { handleFile, PIECE_BYTES } from "./open-file.js";

// In-flight temp files: named so list and walk can hide them.
export const TEMP_NAME = /^\.afs-[0-9a-f]{16}\.tmp$/;
const tempName = (): string => `.afs-${randomBytes(8).toString("hex")}.tmp`;

export async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await fsp.lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  }
}

/**
 * SHA-256 of the file at host location `path` (volume path `p`), read whole when small and a piece
 * at a time when not (bounded memory); null when it is gone. The caller saw a file there: a symlink
 * swapped in since is refused (O_NOFOLLOW, PERMISSION_DENIED), never followed out of the root.
 */
export async function hashFileOrNull(path: string, p: string): Promise<Hash | null> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(e, p);
  }
  try {
    const { size } = await fh.stat();
    if (size <= PIECE_BYTES) return sha256(await fh.readFile());
    const h = createHash("sha256");
    for await (const piece of handleFile(fh, size).stream()) h.update(piece);
    return h.digest("hex");
  } finally {
    await fh.close();
  }
}

/** Writes `data` to a fresh, synced temp file in `dir` (to be renamed or linked into place). */
export async function writeTemp(dir: string, data: Uint8Array, mode: number | undefined): Promise<string> {
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

/** mkdir -p at host location `real`, for volume path `p`; a file in the way is INVALID_PATH. */
export async function makeDirs(real: string, p: string): Promise<void> {
  await fsp.mkdir(real, { recursive: true }).catch((e) => {
    throw fsError(e, p, {
      ENOTDIR: ["INVALID_PATH", `a parent of ${p} is a file, so ${p} cannot be created under it`],
      EEXIST: ["INVALID_PATH", `a parent of ${p} is a file, so ${p} cannot be created under it`],
    });
  });
}

/** The Stat of volume path `p` at host location `real`; only `withHash` reads a file to hash it. */
export async function toStat(p: string, real: string, st: Stats, withHash: boolean): Promise<Stat> {
  const base = { path: p, name: baseName(p), mode: st.mode & 0o7777, mtime: st.mtimeMs };
  if (st.isDirectory()) return { ...base, kind: "dir", size: 0 };
  if (st.isSymbolicLink()) {
    const target = await fsp.readlink(real);
    return { ...base, kind: "symlink", size: Buffer.byteLength(target), sha256: sha256(target), target };
  }
  // Hashing reads the file, so only stat (one path) does it; list and walk leave it out.
  const hash = withHash && st.isFile() ? await hashFileOrNull(real, p) : null;
  return hash ? { ...base, kind: "file", size: st.size, sha256: hash } : { ...base, kind: "file", size: st.size };
}

/** Moves an entry without ever silently dropping a file that appeared at the target. */
export async function moveEntry(
  src: string,
  dst: string,
  kind: Stat["kind"],
  replace: boolean,
  dstPath: string,
): Promise<void> {
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
        throw targetExists(dstPath);
      }
      // Filesystems without hard links fall through to rename, checked under the lock only.
      if (code !== "EPERM" && code !== "EXDEV" && code !== "ENOTSUP" && code !== "EMLINK") throw e;
    }
  }
  // Directories and symlinks: no portable no-replace rename in Node, so the target was checked
  // under this process's lock; another process creating it in between is the remaining window.
  await fsp.rename(src, dst);
}
