// A checkpoint as a read-only Volume: every read operation (read, lines, list, glob, grep) runs on
// a checkpoint's tree exactly as on the live state, and every write is refused. A checkpoint never
// changes, so reads need no snapshot or retry.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { baseName, joinPath, normalizePath, parentOf, ROOT, segments } from "../core/paths.js";
import type { Store } from "../store/store.js";
import { isDirectory, notADirectory, notFound, tooManySymlinks } from "../volume/errors.js";
import type { MutationResult, OpenFile, Stat, Volume } from "../volume/volume.js";
import type { BlobCache } from "./blob-cache.js";
import { openBlob } from "./blob-file.js";
import type { TreeReader } from "./tree.js";
import { plainStat } from "./workspace-volume.js";

const MAX_SYMLINK_HOPS = 16;

export class CheckpointVolume implements Volume {
  readonly label: string;

  constructor(
    private readonly store: Store,
    private readonly trees: TreeReader,
    private readonly blobs: BlobCache,
    readonly workspace: string,
    readonly checkpoint: string,
    private readonly root: Hash,
    private readonly createdAt: number,
  ) {
    this.label = `checkpoint ${checkpoint} of workspace ${workspace}`;
  }

  private resolve(path: string): Promise<Entry | null> {
    if (path === ROOT)
      return Promise.resolve({ kind: "dir", hash: this.root, size: 0, mode: 0o755, mtime: this.createdAt });
    return this.trees.lookup(this.root, segments(path));
  }

  async stat(path: string): Promise<Stat | null> {
    const entry = await this.resolve(path);
    return entry ? this.toStat(path, entry) : null;
  }

  async readFile(path: string): Promise<Buffer> {
    const { entry } = await this.follow(path);
    if (entry.kind === "dir") throw isDirectory(path);
    return this.blob(entry.hash);
  }

  async openFile(path: string): Promise<OpenFile> {
    const { entry } = await this.follow(path);
    if (entry.kind === "dir") throw isDirectory(path);
    return openBlob(this.store, entry.hash, entry.size);
  }

  async readContent(stat: Stat): Promise<Buffer> {
    if (stat.kind !== "file" || !stat.sha256) return this.readFile(stat.path);
    return this.blob(stat.sha256);
  }

  async list(path: string): Promise<Stat[]> {
    const dir = await this.resolve(path);
    if (!dir) throw notFound(path);
    if (dir.kind !== "dir") throw notADirectory(path);
    const tree = await this.trees.get(dir.hash);
    return Promise.all([...tree].map(([name, e]) => this.toStat(joinPath(path, name), e)));
  }

  async *walk(path: string, maxDepth = Number.POSITIVE_INFINITY): AsyncIterable<Stat> {
    const top = await this.resolve(path);
    if (!top) throw notFound(path);
    if (top.kind !== "dir") return;
    const out: Stat[] = [];
    const list = async (dir: string, hash: Hash, depth: number): Promise<void> => {
      for (const [name, e] of await this.trees.get(hash)) {
        const child = joinPath(dir, name);
        // Only a symlink needs a read (its target); everything else is the tree entry as is.
        out.push(e.kind === "symlink" ? await this.toStat(child, e) : plainStat(child, name, e));
        if (e.kind === "dir" && depth < maxDepth) await list(child, e.hash, depth + 1);
      }
    };
    await list(path, top.hash, 1);
    yield* out;
  }

  writeFile(path: string): Promise<MutationResult> {
    return Promise.reject(this.readOnly(path));
  }
  mkdir(path: string): Promise<MutationResult> {
    return Promise.reject(this.readOnly(path));
  }
  remove(path: string): Promise<MutationResult> {
    return Promise.reject(this.readOnly(path));
  }
  rename(from: string): Promise<MutationResult> {
    return Promise.reject(this.readOnly(from));
  }

  private readOnly(path: string): AfsError {
    return new AfsError(
      "PERMISSION_DENIED",
      `${this.label} is read-only; write to the live workspace (omit checkpoint) or restore the checkpoint first`,
      { path, checkpoint: this.checkpoint },
    );
  }

  /** Resolves symlinks (within the checkpoint) to the final existing entry. */
  private async follow(path: string): Promise<{ path: string; entry: Entry }> {
    let cur = path;
    for (let hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
      const e = await this.resolve(cur);
      if (!e) throw notFound(cur);
      if (e.kind !== "symlink") return { path: cur, entry: e };
      const target = (await this.blob(e.hash)).toString("utf8");
      cur = normalizePath(target.startsWith("/") ? target : `${parentOf(cur)}/${target}`);
    }
    throw tooManySymlinks(path);
  }

  private async blob(hash: Hash): Promise<Buffer> {
    if (hash === EMPTY_SHA256) return Buffer.alloc(0);
    const cached = this.blobs.get(hash);
    if (cached) return cached;
    const data = await this.store.getBlob(hash);
    if (!data) throw new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`);
    this.blobs.set(hash, data);
    return data;
  }

  private async toStat(path: string, e: Entry): Promise<Stat> {
    const stat = plainStat(path, baseName(path), e);
    if (e.kind === "symlink") stat.target = (await this.blob(e.hash)).toString("utf8");
    return stat;
  }
}
