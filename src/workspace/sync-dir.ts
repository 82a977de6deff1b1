// Making a directory equal to a tree (export --force: undoing an agent's turn on disk). Files that
// differ are written atomically (temp file + rename), entries the tree lacks are removed, and
// ignored files (the directory's .gitignore/.afsignore) and version-control internals stay.
import { randomBytes } from "node:crypto";
import { chmod, lstat, mkdir, readlink, rename, rm, rmdir, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../core/hash.js";
import type { Store } from "../store/store.js";
import { type DiskEntry, type IgnoreScope, listDir } from "../volume/dir-scan.js";
import { hashFile, writeBlobFile } from "./blob-file.js";
import { RACY_MS } from "./record.js";
import type { TreeReader } from "./tree.js";

export interface SyncResult {
  /** Files in the tree, and their bytes. */
  files: number;
  bytes: number;
  /** Files and symlinks written (they differed or were missing). */
  written: number;
  /** Entries removed because the tree lacks them. */
  removed: number;
}

const tempName = (): string => `.afs-${randomBytes(8).toString("hex")}.tmp`;

/** Makes `dir` (an existing real directory) hold exactly the tree `root`, ignored entries aside. */
export async function syncTree(store: Store, trees: TreeReader, root: Hash, dir: string): Promise<SyncResult> {
  const result: SyncResult = { files: 0, bytes: 0, written: 0, removed: 0 };

  const content = async (hash: Hash, path: string): Promise<Buffer> => {
    if (hash === EMPTY_SHA256) return Buffer.alloc(0);
    const data = await store.getBlob(hash);
    if (!data) throw new AfsError("IO_ERROR", `content of ${path} is missing from the store; run afs fsck`);
    return data;
  };

  /** Removes what the tree lacks below a directory; the directory itself goes only if nothing ignored stays in it. */
  const clear = async (disk: DiskEntry, scopes: readonly IgnoreScope[]): Promise<void> => {
    if (disk.kind !== "dir") {
      await unlink(disk.abs);
      result.removed++;
      return;
    }
    const inner = await listDir(disk.abs, disk.rel, scopes);
    for (const e of inner.entries) await clear(e, inner.scopes);
    try {
      await rmdir(disk.abs);
      result.removed++;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw e;
    }
  };

  const place = async (abs: string, rel: string, entry: Entry, disk: DiskEntry | undefined): Promise<void> => {
    const path = `/${rel}`;
    if (entry.kind === "file") {
      result.files++;
      result.bytes += entry.size;
      if (disk?.kind === "file" && disk.size === entry.size) {
        // An equal mtime proves nothing within the clock's coarse tick ("racily clean"): read recent files.
        const settled = disk.mtime === entry.mtime && disk.mtime < Date.now() - RACY_MS;
        const same = settled || (await hashFile(abs)) === entry.hash;
        if (same) {
          if (disk.mode !== entry.mode) await chmod(abs, entry.mode);
          return;
        }
      }
    } else if (disk?.kind === "symlink" && sha256(await readlink(abs)) === entry.hash) {
      return;
    }
    const streamed = entry.kind === "file" && entry.size > store.chunkBytes;
    const data = streamed ? null : await content(entry.hash, path);
    // A directory in the way goes whole: the tree has a file here.
    if (disk?.kind === "dir") await rm(abs, { recursive: true, force: true });
    const temp = join(abs, "..", tempName());
    try {
      if (!data) await writeBlobFile(store, entry.hash, entry.size, temp, { mode: entry.mode, flag: "wx" });
      else if (entry.kind === "symlink") await symlink(data.toString("utf8"), temp);
      else await writeFile(temp, data, { mode: entry.mode, flag: "wx" });
      if (entry.kind === "file") await chmod(temp, entry.mode);
      await rename(temp, abs);
    } finally {
      await rm(temp, { force: true });
    }
    result.written++;
  };

  const visit = async (hash: Hash, abs: string, rel: string, parent: readonly IgnoreScope[]): Promise<void> => {
    const tree = await trees.get(hash);
    const { entries, scopes } = await listDir(abs, rel, parent);
    const onDisk = new Map(entries.map((e) => [e.name, e]));
    for (const e of entries) if (!tree.has(e.name)) await clear(e, scopes);
    for (const [name, entry] of tree) {
      if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
        throw new AfsError("INVALID_PATH", `refusing to export the entry ${JSON.stringify(name)} of /${rel}`);
      }
      const childAbs = join(abs, name);
      const childRel = rel ? `${rel}/${name}` : name;
      let disk = onDisk.get(name);
      if (!disk) {
        // Ignored on disk but present in the tree: the tree wins (lstat, never followed).
        const st = await lstat(childAbs).catch(() => null);
        if (st)
          disk = {
            name,
            rel: childRel,
            abs: childAbs,
            kind: st.isDirectory() ? "dir" : "file",
            size: -1,
            mode: 0,
            mtime: 0,
          };
      }
      if (entry.kind !== "dir") {
        await place(childAbs, childRel, entry, disk);
        continue;
      }
      if (disk && disk.kind !== "dir") {
        await unlink(childAbs);
        result.removed++;
      }
      if (disk?.kind !== "dir") await mkdir(childAbs);
      await visit(entry.hash, childAbs, childRel, scopes);
    }
  };

  try {
    await visit(root, dir, "", []);
    return result;
  } catch (e) {
    throw toAfsError(e);
  }
}
