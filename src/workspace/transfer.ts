// Moving trees between disk and the store: import a directory (honouring .gitignore and
// .afsignore) into a checkpoint, and export a checkpoint or the live state to a directory.

import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { DIR_MODE, type Entry } from "../core/entry.js";
import { AfsError, toAfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import type { Store } from "../store/store.js";
import { type DiskEntry, scanTree } from "../volume/dir-scan.js";
import { type TreeReader, TreeWriter } from "./tree.js";

export type Progress = (done: number, total: number) => void;

const BATCH_BYTES = 16 * 1024 * 1024;
const CONCURRENCY = 32;

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

/** Stores the directory's content and returns the root tree hash plus counts. */
export async function importTree(
  store: Store,
  root: string,
  onProgress?: Progress,
): Promise<{ root: Hash; files: number; bytes: number }> {
  let items: DiskEntry[];
  try {
    const st = await lstat(root);
    if (!st.isDirectory()) throw new AfsError("INVALID_ARGUMENT", `${root} is not a directory`);
    items = await scanTree(root);
  } catch (e) {
    throw toAfsError(e);
  }
  const total = items.reduce((n, i) => n + (i.kind === "file" ? i.size : 0), 0);
  const entries = new Map<string, Entry>();
  let done = 0;
  let batch: { hash: Hash; data: Uint8Array }[] = [];
  let batchBytes = 0;
  let flushing: Promise<void> = Promise.resolve();
  const flush = (): void => {
    const blobs = batch;
    batch = [];
    batchBytes = 0;
    flushing = flushing.then(() => store.putBlobs(blobs));
  };
  await eachLimited(items, CONCURRENCY, async (item) => {
    if (item.kind === "dir") return;
    const data = item.kind === "file" ? await readFile(item.abs) : Buffer.from(await readlink(item.abs));
    const hash = sha256(data);
    batch.push({ hash, data });
    batchBytes += data.length;
    if (batchBytes >= BATCH_BYTES) flush();
    entries.set(item.rel, { kind: item.kind, hash, size: data.length, mode: item.mode, mtime: item.mtime });
    done += item.kind === "file" ? data.length : 0;
    onProgress?.(done, total);
  });
  flush();
  await flushing;
  const writer = new TreeWriter();
  const rootHash = buildTrees(items, entries, writer);
  await writer.flush(store);
  return { root: rootHash, files: items.filter((i) => i.kind === "file").length, bytes: total };
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
    await mkdir(dir, { recursive: true });
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
    await eachLimited(files, CONCURRENCY, async ({ rel, entry }) => {
      const data = await store.getBlob(entry.hash);
      if (!data) throw new AfsError("IO_ERROR", `content of /${rel} is missing from the store; run afs fsck`);
      const target = join(dir, ...rel.split("/"));
      if (!target.startsWith(dir + sep) && relative(dir, target).startsWith("..")) {
        throw new AfsError("INVALID_PATH", `refusing to export /${rel} outside ${dir}`);
      }
      if (entry.kind === "symlink") await symlink(data.toString("utf8"), target);
      else await writeFile(target, data, { mode: entry.mode });
      done += entry.kind === "file" ? entry.size : 0;
      onProgress?.(done, total);
    });
    return { files: files.filter((f) => f.entry.kind === "file").length, bytes: total };
  } catch (e) {
    throw toAfsError(e);
  }
}
