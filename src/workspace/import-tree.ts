// Importing a directory (honouring .gitignore and .afsignore) as a tree, streamed: the walk lists
// one directory at a time, a bounded window of files is read, hashed and stored in batched
// transactions, and each directory's tree is written as soon as its last child is done. Memory
// follows the window and the directories open along the walk, never the number of files. Files
// up to a chunk are read, hashed and deflated in batches on worker threads (import-pool.ts), so
// the main thread only walks and stores; AFS_IMPORT_WORKERS=0 does it all here, as before.
import { readFileSync } from "node:fs";
import { lstat, readFile, readlink } from "node:fs/promises";
import { DIR_MODE, type Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import type { Env } from "../core/settings.js";
import type { Store } from "../store/store.js";
import { type DiskEntry, type IgnoreScope, listDir } from "../volume/dir-scan.js";
import { storeFile } from "./blob-file.js";
import { ByteBudget, fileError, forFile } from "./byte-budget.js";
import { type EncodedBatch, encodeFiles, failureError, fileOf } from "./import-batch.js";
import { ImportPool, importWorkersFrom } from "./import-pool.js";
import { encodeTree } from "./tree.js";

/** Bytes done so far, and the total: known in advance by an export, the bytes found so far by an import (a streamed walk). */
export type Progress = (done: number, total: number) => void;

/** Blob bytes per store transaction: big enough to amortize it, small enough to keep RSS flat. */
const BATCH_BYTES = 16 * 1024 * 1024;
/** Objects per store transaction, so trees of tiny files still commit in bounded batches. */
const BATCH_OBJECTS = 4096;
/** Files being read at once: enough to keep the disk and the thread pool busy. */
const FILES_IN_FLIGHT = 32;
/** File bytes held in memory at once (read, not yet stored), so RSS stays bounded on any tree. */
const BYTES_IN_FLIGHT = 64 * 1024 * 1024;
/**
 * Files up to this size are read synchronously in the walk: one read costs a few microseconds from
 * the page cache, while a promise-based read costs four thread-pool round trips and their garbage,
 * which is most of an import of small files. Larger files go through the window of async reads.
 */
const SYNC_READ_BYTES = 256 * 1024;
/**
 * Small files per batch for the worker threads: enough that a message's cost (~50 µs) is noise
 * beside reading, hashing and deflating them, few enough that every worker gets work early.
 */
const BATCH_FILES = 256;
/** File bytes per batch for the worker threads, so a batch of larger files stays small in memory. */
const BATCH_READ_BYTES = 4 * 1024 * 1024;
/** Batches handed to each worker at once: one being worked on, one waiting, so it never idles. */
const BATCHES_PER_WORKER = 2;
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

/** A directory whose tree is not written yet: it waits for `pending` children (and its own listing). */
interface OpenDir {
  name: string;
  mtime: number;
  parent: OpenDir | null;
  entries: Map<string, Entry>;
  pending: number;
}

type Obj = { hash: Hash; data: Uint8Array; stored?: Uint8Array };

/**
 * Objects on their way to the store, written a batch at a time in order: a batch's blobs before
 * its trees, and every batch after the one before it, so a tree never lands before what it names.
 */
class BatchWriter {
  private blobs: Obj[] = [];
  private trees: Obj[] = [];
  private bytes = 0;
  private held = 0;
  private chain: Promise<void> = Promise.resolve();
  failure: unknown = null;

  constructor(
    private readonly store: Store,
    private readonly budget: ByteBudget,
  ) {}

  /** `held` budget bytes come back once the blob is stored. */
  blob(obj: Obj, held: number): void {
    this.blobs.push(obj);
    this.bytes += obj.data.byteLength;
    this.held += held;
    this.maybeFlush();
  }

  tree(obj: Obj): void {
    this.trees.push(obj);
    this.bytes += obj.data.byteLength;
    this.maybeFlush();
  }

  private maybeFlush(): void {
    if (this.bytes >= BATCH_BYTES || this.blobs.length + this.trees.length >= BATCH_OBJECTS) this.flush();
  }

  flush(): void {
    const { blobs, trees, held } = this;
    if (blobs.length + trees.length === 0) return;
    this.blobs = [];
    this.trees = [];
    this.bytes = 0;
    this.held = 0;
    this.chain = this.chain
      .then(async () => {
        if (this.failure) return;
        if (blobs.length > 0) await this.store.putBlobs(blobs);
        if (trees.length > 0) await this.store.putTrees(trees);
      })
      .catch((e: unknown) => {
        this.failure ??= e;
      })
      .finally(() => this.budget.give(held));
  }

  /** Waits for the batches already started, whatever became of them (after a failed walk). */
  async settled(): Promise<void> {
    await this.chain;
  }

  /** Writes what is left and waits for every batch. */
  async drain(): Promise<void> {
    this.flush();
    await this.chain;
    if (this.failure) throw this.failure;
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
  const workers = importWorkersFrom(env);
  try {
    const st = await lstat(root);
    if (!st.isDirectory()) throw new AfsError("INVALID_ARGUMENT", `${root} is not a directory`);
  } catch (e) {
    throw toAfsError(e);
  }
  const skipped: SkippedFile[] = [];
  const budget = new ByteBudget(BYTES_IN_FLIGHT);
  const slots = new ByteBudget(FILES_IN_FLIGHT);
  const out = new BatchWriter(store, budget);
  const running = new Set<Promise<void>>();
  let failure: unknown = null;
  let files = 0;
  let found = 0;
  let done = 0;
  let rootHash: Hash | null = null;
  const progress = (n: number): void => {
    done += n;
    onProgress?.(done, found);
  };

  /** One child of `dir` is done; the last one writes `dir`'s tree and tells its parent. */
  const settle = (dir: OpenDir): void => {
    if (--dir.pending > 0) return;
    const data = encodeTree(dir.entries);
    const hash = sha256(data);
    out.tree({ hash, data });
    dir.entries = new Map();
    if (!dir.parent) {
      rootHash = hash;
      return;
    }
    dir.parent.entries.set(dir.name, { kind: "dir", hash, size: 0, mode: DIR_MODE, mtime: dir.mtime });
    settle(dir.parent);
  };

  const storeOne = async (item: DiskEntry, dir: OpenDir): Promise<void> => {
    const meta = { kind: item.kind, mode: item.mode, mtime: item.mtime };
    if (item.kind === "file" && item.size > store.chunkBytes) {
      // Streamed: hashed and stored in one pass, two chunks and two read buffers in memory.
      const held = await budget.take(4 * store.chunkBytes);
      try {
        const { hash, size } = await forFile(item.rel, () => storeFile(store, item.abs, progress));
        dir.entries.set(item.name, { ...meta, hash, size });
      } finally {
        budget.give(held);
      }
      return;
    }
    const held = await budget.take(Math.max(item.size, 1));
    let data: Buffer;
    try {
      data = await forFile(item.rel, async () =>
        item.kind === "file" ? await readFile(item.abs) : Buffer.from(await readlink(item.abs)),
      );
    } catch (e) {
      budget.give(held);
      throw e;
    }
    const hash = sha256(data);
    dir.entries.set(item.name, { ...meta, hash, size: data.length });
    out.blob({ hash, data }, held);
    if (item.kind === "file") progress(data.length);
  };

  /** Starts storing one file once a slot is free; the walk goes on meanwhile. */
  const dispatch = async (item: DiskEntry, dir: OpenDir): Promise<void> => {
    await slots.take(1);
    const job = storeOne(item, dir)
      .then(
        () => settle(dir),
        (e: unknown) => {
          failure ??= e;
        },
      )
      .finally(() => {
        slots.give(1);
        running.delete(job);
      });
    running.add(job);
  };

  // Small files for the worker threads, a batch at a time. The pool starts with the first full
  // batch: an import of a few files is done before threads would have started.
  let pool: ImportPool | null = null;
  let batch: { item: DiskEntry; dir: OpenDir; held: number }[] = [];
  let batchBytes = 0;
  const batchSlots = new ByteBudget(Math.max(1, workers) * BATCHES_PER_WORKER);

  /** Puts each file of a batch back where it belongs: its directory's entries, and the writer. */
  const deliver = (items: typeof batch, encoded: EncodedBatch): void => {
    for (const [i, { item, dir, held }] of items.entries()) {
      const file = fileOf(encoded, i);
      if ("message" in file) {
        budget.give(held);
        failure ??= fileError(item.rel, failureError(file));
        continue;
      }
      const { hash, data, stored } = file;
      dir.entries.set(item.name, { kind: "file", mode: item.mode, mtime: item.mtime, hash, size: data.length });
      out.blob({ hash, data, stored }, held);
      progress(data.length);
      settle(dir);
    }
  };

  /** Sends the batch gathered so far to a worker (the last, partial one of a small import: read here). */
  const sendBatch = async (last = false): Promise<void> => {
    const items = batch;
    if (items.length === 0) return;
    batch = [];
    batchBytes = 0;
    const paths = items.map((b) => b.item.abs);
    if (!pool && last) {
      deliver(items, encodeFiles(paths));
      return;
    }
    pool ??= new ImportPool(workers);
    await batchSlots.take(1);
    const job = pool
      .run(paths)
      .then(
        (encoded) => deliver(items, encoded),
        (e: unknown) => {
          for (const b of items) budget.give(b.held);
          failure ??= e;
        },
      )
      .finally(() => {
        batchSlots.give(1);
        running.delete(job);
      });
    running.add(job);
  };

  const tooBig = (item: DiskEntry): boolean => {
    if (item.kind !== "file" || item.size <= maxFileBytes) return false;
    const reason = `${item.size} bytes is over the ${maxFileBytes}-byte cap (AFS_MAX_FILE_BYTES)`;
    if (strict) {
      throw new AfsError("QUOTA_EXCEEDED", `/${item.rel}: ${reason}; raise AFS_MAX_FILE_BYTES or leave the file out`, {
        file: `/${item.rel}`,
        size: item.size,
        limit: maxFileBytes,
      });
    }
    skipped.push({ path: `/${item.rel}`, size: item.size, reason });
    return true;
  };

  // Depth first, one listing per directory on the path from the root: children are dispatched in
  // order, subdirectories walked as they come, and a directory closes once all of them settle.
  const walk = async (abs: string, rel: string, scopes: readonly IgnoreScope[], dir: OpenDir): Promise<void> => {
    const listed = await listDir(abs, rel, scopes, true);
    for (const item of listed.entries) {
      if (failure || out.failure) return;
      if (item.kind === "dir") {
        dir.pending++;
        const child: OpenDir = { name: item.name, mtime: item.mtime, parent: dir, entries: new Map(), pending: 1 };
        await walk(item.abs, item.rel, listed.scopes, child);
        continue;
      }
      if (tooBig(item)) continue;
      if (item.kind === "file") {
        files++;
        found += item.size;
      }
      // With workers, every file stored whole (up to a chunk) is read and deflated on one of them.
      if (item.kind === "file" && item.size <= store.chunkBytes && workers > 0) {
        const held = Math.max(item.size, 1);
        if (!budget.tryTake(held)) {
          // What the batch holds comes back only once it is sent.
          await sendBatch();
          await budget.take(held);
        }
        dir.pending++;
        batch.push({ item, dir, held });
        batchBytes += item.size;
        if (batch.length >= BATCH_FILES || batchBytes >= BATCH_READ_BYTES) await sendBatch();
        continue;
      }
      if (item.kind === "file" && item.size <= SYNC_READ_BYTES) {
        const held = Math.max(item.size, 1);
        if (!budget.tryTake(held)) await budget.take(held);
        let data: Buffer;
        try {
          data = readFileSync(item.abs);
        } catch (e) {
          budget.give(held);
          throw fileError(item.rel, e);
        }
        const hash = sha256(data);
        dir.entries.set(item.name, { kind: "file", mode: item.mode, mtime: item.mtime, hash, size: data.length });
        out.blob({ hash, data }, held);
        progress(data.length);
        continue;
      }
      dir.pending++;
      await dispatch(item, dir);
    }
    settle(dir);
  };

  try {
    const top: OpenDir = { name: "", mtime: 0, parent: null, entries: new Map(), pending: 1 };
    try {
      await walk(root, "", [], top);
      if (!failure && !out.failure) await sendBatch(true);
    } finally {
      // Nothing may still be reading when the import returns or fails.
      await Promise.all(running);
      await (pool as ImportPool | null)?.close();
    }
    if (failure) throw failure;
    await out.drain();
  } catch (e) {
    await out.settled();
    throw toAfsError(e);
  }
  if (!rootHash) throw new AfsError("INTERNAL", "the import finished without a root tree");
  return { root: rootHash, files, bytes: found, skipped };
}
