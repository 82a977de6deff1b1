// A checkpoint as a read-only Volume: every read operation (read, lines, list, glob, grep) runs on
// a checkpoint's tree exactly as on the live state, and every write is refused. A checkpoint never
// changes, so reads need no snapshot or retry.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { joinPath, ROOT, segments } from "../core/paths.js";
import type { Store } from "../store/store.js";
import { isDirectory, notADirectory, notFound } from "../volume/errors.js";
import type { MutationResult, OpenFile, Stat, Volume } from "../volume/volume.js";
import type { BlobCache } from "./blob-cache.js";
import { openBlob } from "./blob-file.js";
import type { TreeReader } from "./tree.js";
import { cachedBlob, followSymlinks, statOf, streamWalk } from "./tree-reads.js";

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
    const open = async (_dir: string, entry: Entry) => {
      const tree = await this.trees.get(entry.hash, { keep: false });
      return { tree, names: tree.keys() };
    };
    yield* streamWalk(path, top, maxDepth, open, (hash) => this.blob(hash));
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

  private follow(path: string): Promise<{ path: string; entry: Entry }> {
    return followSymlinks(
      path,
      (p) => this.resolve(p),
      (hash) => this.blob(hash),
    );
  }

  private blob(hash: Hash): Promise<Buffer> {
    return cachedBlob(this.store, this.blobs, hash);
  }

  private toStat(path: string, e: Entry): Promise<Stat> {
    return statOf(path, e, (hash) => this.blob(hash));
  }
}
