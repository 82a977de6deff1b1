// Moving trees between disk and the store: import a directory (honouring .gitignore and
// .afsignore) into a checkpoint, and export a checkpoint or the live state to a directory.

import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { DIR_MODE, type Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../core/hash.js";
import type { Env } from "../core/settings.js";
import { makeDirectory } from "../store/make-dir.js";
import type { Store } from "../store/store.js";
import { type DiskEntry, scanTree } from "../volume/dir-scan.js";
import { storeFile, writeBlobFile } from "./blob-file.js";
import { type TreeReader, TreeWriter } from "./tree.js";

export type Progress = (done: number, total: number) => void;

const BATCH_BYTES = 16 * 1024 * 1024;
const CONCURRENCY = 32;
/** File bytes held in memory at once by an import or export, so RSS stays bounded on any tree. */
const BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/** Default for AFS_MAX_FILE_BYTES: files above it are skipped (or refused with strict). */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 ** 3;

/** A file an import left out, and why. */
export interface SkippedFile {
  path: string;
  size: number;
  reason: string;
}

export interface ImportOptions {
  onProgress?: Progress;
  /** Files larger than this are skipped with a SkippedFile (default AFS_MAX_FILE_BYTES or 16 GiB). */
  maxFileBytes?: number;
  /** Refuse the import (QUOTA_EXCEEDED, naming the file) instead of skipping a file over the cap. */
  strict?: boolean;
}

/** The cap from AFS_MAX_FILE_BYTES (a byte count), else DEFAULT_MAX_FILE_BYTES. */
function maxFileBytesFrom(env: Env): number {
  const raw = env.AFS_MAX_FILE_BYTES;
  if (raw === undefined || raw === "") return DEFAULT_MAX_FILE_BYTES;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new AfsError("INVALID_ARGUMENT", `AFS_MAX_FILE_BYTES must be a whole number of bytes (got ${raw})`);
  }
  return n;
}

/** Runs `fn` over items with bounded parallelism. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  });
  await Promise.all(workers);
}

/** A budget of bytes in memory: take before reading, give back once stored or written. */
class ByteBudget {
  private free: number;
  private readonly waiting: { n: number; go: () => void }[] = [];

  constructor(private readonly limit: number) {
    this.free = limit;
  }

  /** Takes up to the whole budget (a bigger request waits for all of it). */
  async take(bytes: number): Promise<number> {
    const n = Math.min(bytes, this.limit);
    if (this.waiting.length === 0 && n <= this.free) {
      this.free -= n;
      return n;
    }
    await new Promise<void>((go) => this.waiting.push({ n, go }));
    return n;
  }

  give(n: number): void {
    this.free += n;
    for (let w = this.waiting[0]; w && w.n <= this.free; w = this.waiting[0]) {
      this.waiting.shift();
      this.free -= w.n;
      w.go();
    }
  }
}

/** Runs `fn` for one file, so a failure names the file and keeps its code. */
async function forFile<T>(rel: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const err = toAfsError(e);
    if (err.details.file !== undefined) throw err;
    throw new AfsError(err.code, `/${rel}: ${err.message}`, { ...err.details, file: `/${rel}` });
  }
}

/** Stores the directory's content and returns the root tree hash plus counts and skipped files. */
export async function importTree(
  store: Store,
  root: string,
  options: ImportOptions,
  /** The engine's settings (AFS_MAX_FILE_BYTES when options give no cap): required, never silently none. */
  env: Env,
): Promise<{ root: Hash; files: number; bytes: number; skipped: SkippedFile[] }> {
  const { onProgress, strict = false } = options;
  const maxFileBytes = options.maxFileBytes ?? maxFileBytesFrom(env);
  let scanned: DiskEntry[];
  try {
    const st = await lstat(root);
    if (!st.isDirectory()) throw new AfsError("INVALID_ARGUMENT", `${root} is not a directory`);
    scanned = await scanTree(root);
  } catch (e) {
    throw toAfsError(e);
  }
  const skipped: SkippedFile[] = [];
  const items = scanned.filter((i) => {
    if (i.kind !== "file" || i.size <= maxFileBytes) return true;
    const reason = `${i.size} bytes is over the ${maxFileBytes}-byte cap (AFS_MAX_FILE_BYTES)`;
    if (strict) {
      throw new AfsError("QUOTA_EXCEEDED", `/${i.rel}: ${reason}; raise AFS_MAX_FILE_BYTES or leave the file out`, {
        file: `/${i.rel}`,
        size: i.size,
        limit: maxFileBytes,
      });
    }
    skipped.push({ path: `/${i.rel}`, size: i.size, reason });
    return false;
  });
  const total = items.reduce((n, i) => n + (i.kind === "file" ? i.size : 0), 0);
  const entries = new Map<string, Entry>();
  const budget = new ByteBudget(BYTES_IN_FLIGHT);
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    onProgress?.(done, total);
  };
  let batch: { hash: Hash; data: Uint8Array }[] = [];
  let batchBytes = 0;
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): void => {
    const blobs = batch;
    const held = batchBytes;
    batch = [];
    batchBytes = 0;
    flushing = flushing.then(() => store.putBlobs(blobs)).finally(() => budget.give(held));
  };
  await eachLimited(items, CONCURRENCY, async (item) => {
    if (item.kind === "dir") return;
    const meta = { kind: item.kind, mode: item.mode, mtime: item.mtime };
    if (item.kind === "file" && item.size > store.chunkBytes) {
      // Streamed: hashed and stored in one pass, two chunks and two read buffers in memory.
      const held = await budget.take(4 * store.chunkBytes);
      try {
        const { hash, size } = await forFile(item.rel, () => storeFile(store, item.abs, progress));
        entries.set(item.rel, { ...meta, hash, size });
      } finally {
        budget.give(held);
      }
      return;
    }
    const held = await budget.take(Math.max(item.size, 1));
    const data = await forFile(item.rel, async () =>
      item.kind === "file" ? await readFile(item.abs) : Buffer.from(await readlink(item.abs)),
    );
    const hash = sha256(data);
    batch.push({ hash, data });
    batchBytes += held;
    if (batchBytes >= BATCH_BYTES) flush();
    entries.set(item.rel, { ...meta, hash, size: data.length });
    if (item.kind === "file") progress(data.length);
  });
  flush();
  await flushing;
  const writer = new TreeWriter();
  const rootHash = buildTrees(items, entries, writer);
  await writer.flush(store);
  return { root: rootHash, files: items.filter((i) => i.kind === "file").length, bytes: total, skipped };
}

/** Builds trees bottom-up from the scanned list (children always follow their directory). */
function buildTrees(items: readonly DiskEntry[], entries: Map<string, Entry>, writer: TreeWriter): Hash {
  const dirs = new Map<string, Map<string, Entry>>([["", new Map()]]);
  const dirMeta = new Map<string, DiskEntry>();
  for (const item of items) {
    if (item.kind !== "dir") continue;
    dirs.set(item.rel, new Map());
    dirMeta.set(item.rel, item);
  }
  for (const item of items) {
    if (item.kind === "dir") continue;
    const i = item.rel.lastIndexOf("/");
    dirs.get(i < 0 ? "" : item.rel.slice(0, i))?.set(item.rel.slice(i + 1), entries.get(item.rel) as Entry);
  }
  // Deepest directories first, so each parent sees its children's final hashes.
  const order = [...dirMeta.keys()].sort((a, b) => b.split("/").length - a.split("/").length);
  for (const rel of order) {
    const hash = writer.add(dirs.get(rel) as Map<string, Entry>);
    const i = rel.lastIndexOf("/");
    const meta = dirMeta.get(rel) as DiskEntry;
    dirs.get(i < 0 ? "" : rel.slice(0, i))?.set(rel.slice(i + 1), {
      kind: "dir",
      hash,
      size: 0,
      mode: DIR_MODE,
      mtime: meta.mtime,
    });
  }
  return writer.add(dirs.get("") as Map<string, Entry>);
}

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
