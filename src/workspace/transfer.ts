// Moving trees between disk and the store: import a directory (honouring .gitignore and
// .afsignore) into a checkpoint (import-tree.ts), and export a checkpoint or the live state to a directory.

import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { makeDirectory } from "../store/make-dir.js";
import type { Store } from "../store/store.js";
import { writeBlobFile } from "./blob-file.js";
import { ByteBudget, eachLimited, forFile } from "./byte-budget.js";
import type { Progress } from "./import-tree.js";
import { decodeTree, EMPTY_TREE, EMPTY_TREE_DATA } from "./tree.js";

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

/** A tree entry's name that could step outside its directory (a corrupt or hostile store). */
const unsafeName = (name: string): boolean =>
  name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0");

/**
 * Writes the tree `root` into `dir`, which must not exist or be empty. Streamed like the import: one
 * directory's tree at a time (read past the engine's tree cache, which a whole-tree walk would
 * only flush), its files' contents fetched a bounded window at a time and written synchronously
 * (a small file's write is a few microseconds; a promise-based one is four thread-pool trips).
 */
export async function exportTree(
  store: Store,
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
    let files = 0;
    let found = 0;
    let done = 0;
    const budget = new ByteBudget(BYTES_IN_FLIGHT);

    const writeOne = async (rel: string, target: string, entry: Entry): Promise<void> => {
      const held = await budget.take(Math.min(entry.size, 2 * store.chunkBytes) || 1);
      try {
        await forFile(rel, async () => {
          if (entry.kind === "file" && entry.size > store.chunkBytes) {
            await writeBlobFile(store, entry.hash, entry.size, target, { mode: entry.mode });
            return;
          }
          const data = entry.hash === EMPTY_SHA256 ? Buffer.alloc(0) : await store.getBlob(entry.hash);
          if (!data) throw new AfsError("IO_ERROR", "its content is missing from the store; run afs fsck");
          if (entry.kind === "symlink") symlinkSync(data.toString("utf8"), target);
          else writeFileSync(target, data, { mode: entry.mode });
        });
      } finally {
        budget.give(held);
      }
      if (entry.kind === "file") {
        done += entry.size;
        onProgress?.(done, found);
      }
    };

    const visit = async (hash: Hash, rel: string, abs: string): Promise<void> => {
      const data = hash === EMPTY_TREE ? EMPTY_TREE_DATA : await store.getTree(hash);
      if (!data) throw new AfsError("IO_ERROR", `tree ${hash} is missing from the store; run afs fsck`);
      const subdirs: [string, Entry][] = [];
      const leaves: [string, Entry][] = [];
      for (const [name, entry] of decodeTree(data, hash)) {
        if (unsafeName(name)) {
          throw new AfsError("INVALID_PATH", `refusing to export the entry ${JSON.stringify(name)} of /${rel}`);
        }
        if (entry.kind === "dir") subdirs.push([name, entry]);
        else {
          leaves.push([name, entry]);
          if (entry.kind === "file") {
            files++;
            found += entry.size;
          }
        }
      }
      // Contents come a window at a time (one store round trip each, which Redis answers in parallel).
      await eachLimited(leaves, CONCURRENCY, ([name, entry]) =>
        writeOne(rel ? `${rel}/${name}` : name, join(abs, name), entry),
      );
      for (const [name, entry] of subdirs) {
        const childAbs = join(abs, name);
        mkdirSync(childAbs);
        await visit(entry.hash, rel ? `${rel}/${name}` : name, childAbs);
      }
    };
    await visit(root, "", dir);
    return { files, bytes: found };
  } catch (e) {
    throw toAfsError(e);
  }
}
