// An attached workspace as a Volume: reads and writes go to its directory on disk (confined by
// LocalDirVolume), each mutation is recorded into the workspace at once, and list/walk report the
// content hash of every file whose size and mtime still match its recorded entry, so grep and
// query, given the home's indexes, reuse them for those files and read only the others.
import type { Hash } from "../core/hash.js";
import { normalizePath } from "../core/paths.js";
import type { LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
import type { MutationResult, OpenFile, Stat, Volume, WriteOptions } from "../volume/volume.js";
import { RACY_MS, type RecordResult, type VerifiedStats } from "./record.js";
import type { WorkspaceVolume } from "./workspace-volume.js";

/** What an attached volume needs from the engine besides the directory. */
export interface AttachedLink {
  /** The workspace's recorded live state (what hashes are known for). */
  live: WorkspaceVolume;
  /** Records these paths of the directory into the workspace. */
  record(paths: string[]): Promise<RecordResult>;
  /** When the workspace last changed (ms): entries with an mtime near it are racy (RACY_MS). */
  updatedAt(): Promise<number>;
  verified: VerifiedStats;
}

export class AttachedVolume implements Volume {
  readonly label: string;

  constructor(
    readonly workspace: string,
    /** The directory's real path. */
    readonly dir: string,
    private readonly local: LocalDirVolume,
    private readonly link: AttachedLink,
  ) {
    this.label = `workspace ${workspace} (directory ${dir})`;
  }

  /** A single stat reads the file, so its hash is always exact. */
  stat(path: string): Promise<Stat | null> {
    return this.local.stat(path);
  }

  readFile(path: string): Promise<Buffer> {
    return this.local.readFile(path);
  }

  /**
   * The file on disk, with its recorded hash when its size and mtime (as opened) still match, as
   * list and walk give it: file_lines then neither hashes nor counts the whole file on every call.
   */
  async openFile(path: string): Promise<OpenFile> {
    const file = await this.local.openFile(path);
    if (file.mtime === undefined) return file;
    const p = normalizePath(path);
    const recorded = await this.recordedHashes(this.link.live.stat(p).then((s) => (s ? [s] : [])));
    const sha256 = recorded(p, file.size, file.mtime);
    if (sha256 === undefined) return file;
    return {
      size: file.size,
      sha256,
      hash: async () => sha256,
      mtime: file.mtime,
      read: (offset, length) => file.read(offset, length),
      stream: () => file.stream(),
      close: () => file.close(),
    };
  }

  realPath(path: string, options?: { entry?: boolean }): Promise<string> {
    return this.local.realPath(path, options);
  }

  async list(path: string): Promise<Stat[]> {
    const known = withHashes(await this.recordedHashes(this.link.live.list(path)));
    return (await this.local.list(path)).map(known);
  }

  async *walk(path: string, maxDepth = Number.POSITIVE_INFINITY): AsyncIterable<Stat> {
    const known = withHashes(await this.recordedHashes(collect(this.link.live.walk(path, maxDepth))));
    for await (const s of this.local.walk(path, maxDepth)) yield known(s);
  }

  async writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult> {
    return this.recorded(await this.local.writeFile(path, data, options), [path]);
  }

  async mkdir(path: string): Promise<MutationResult> {
    return this.recorded(await this.local.mkdir(path), [path]);
  }

  async remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult> {
    return this.recorded(await this.local.remove(path, options), [path]);
  }

  async rename(from: string, to: string, options: { overwrite?: boolean }): Promise<MutationResult> {
    return this.recorded(await this.local.rename(from, to, options), [from, to]);
  }

  /** The workspace's revision after recording what a mutation touched (the asked path and where it landed). */
  private async recorded(result: MutationResult, paths: string[]): Promise<MutationResult> {
    const { revision } = await this.link.record([...paths, result.path]);
    return { ...result, revision };
  }

  /**
   * A function giving a file on disk its hash when its recorded entry (or a verified read) has the
   * same size and mtime, and that mtime is not racy; undefined for other files, left for a read.
   */
  private async recordedHashes(
    liveStats: Promise<Stat[]>,
  ): Promise<(path: string, size: number, mtime: number) => Hash | undefined> {
    const byPath = new Map<string, Stat>();
    try {
      for (const s of await liveStats) if (s.kind === "file") byPath.set(s.path, s);
    } catch {
      // Not recorded yet (a new directory): nothing is known below it.
    }
    const racyAfter = (await this.link.updatedAt()) - RACY_MS;
    return (path, size, exactMtime) => {
      const mtime = Math.floor(exactMtime);
      const live = byPath.get(path);
      return live?.sha256 && live.size === size && live.mtime === mtime && mtime < racyAfter
        ? live.sha256
        : this.link.verified.hash(this.workspace, path, size, mtime);
    };
  }
}

/** Adds the recorded hash to each file's disk Stat that has none. */
const withHashes =
  (recorded: (path: string, size: number, mtime: number) => Hash | undefined) =>
  (s: Stat): Stat => {
    if (s.kind !== "file" || s.sha256) return s;
    const hash = recorded(s.path, s.size, s.mtime);
    return hash ? { ...s, sha256: hash } : s;
  };

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
