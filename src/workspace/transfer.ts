// Moving trees between disk and the store: import a directory (honouring .gitignore and
// .afsignore) into a checkpoint (import-tree.ts), and export a checkpoint or the live state to a directory.

import { mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { makeDirectory } from "../store/make-dir.js";
import type { Store } from "../store/store.js";
import { writeBlobFile } from "./blob-file.js";
import { ByteBudget, eachLimited, forFile } from "./byte-budget.js";
import type { Progress } from "./import-tree.js";
import type { TreeReader } from "./tree.js";

export {
  DEFAULT_MAX_FILE_BYTES,
  type ImportOptions,
  importTree,
  type Progress,
  type SkippedFile,
} from "./import-tree.js";

const CONCURRENCY = 32;
/** File bytes held in memory at once by an export, so RSS stays bounded on any tree. */
const BYTES_IN_FLIGHT = 64 * 1024 * 1024;

/** Writes the tree `root` into `dir`, which must not exist or be empty. */
export async function exportTree(
  store: Store,
  trees: TreeReader,
  root: Hash,
  dir: string,
  onProgress?: Progress,
): Promise<{ files: number; bytes: number }> {
  try {
    const existing = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return [];
      throw e;
    });
    if (existing.length > 0) {
      throw new AfsError("ALREADY_EXISTS", `${dir} is not empty; export into a new or empty directory`);
    }
    makeDirectory(dir, "the export");
    const files: { rel: string; entry: Entry }[] = [];
    const visit = async (hash: Hash, rel: string): Promise<void> => {
      for (const [name, entry] of await trees.get(hash)) {
        const child = rel ? `${rel}/${name}` : name;
        if (entry.kind === "dir") {
          await mkdir(join(dir, ...child.split("/")), { recursive: true });
          await visit(entry.hash, child);
        } else files.push({ rel: child, entry });
      }
    };
    await visit(root, "");
    const total = files.reduce((n, f) => n + (f.entry.kind === "file" ? f.entry.size : 0), 0);
    let done = 0;
    const budget = new ByteBudget(BYTES_IN_FLIGHT);
    await eachLimited(files, CONCURRENCY, async ({ rel, entry }) => {
      const target = join(dir, ...rel.split("/"));
      if (!target.startsWith(dir + sep) && relative(dir, target).startsWith("..")) {
        throw new AfsError("INVALID_PATH", `refusing to export /${rel} outside ${dir}`);
      }
      const held = await budget.take(Math.min(entry.size, 2 * store.chunkBytes) || 1);
      try {
        await forFile(rel, async () => {
          if (entry.kind === "file" && entry.size > store.chunkBytes) {
            await writeBlobFile(store, entry.hash, entry.size, target, { mode: entry.mode });
            return;
          }
          const data = entry.hash === EMPTY_SHA256 ? Buffer.alloc(0) : await store.getBlob(entry.hash);
          if (!data) throw new AfsError("IO_ERROR", "its content is missing from the store; run afs fsck");
          if (entry.kind === "symlink") await symlink(data.toString("utf8"), target);
          else await writeFile(target, data, { mode: entry.mode });
        });
      } finally {
        budget.give(held);
      }
      done += entry.kind === "file" ? entry.size : 0;
      onProgress?.(done, total);
    });
    return { files: files.filter((f) => f.entry.kind === "file").length, bytes: total };
  } catch (e) {
    throw toAfsError(e);
  }
}
