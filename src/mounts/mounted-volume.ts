// A mounted directory as a Volume, for a surface that writes into it while the mount runs (`afs
// acp`'s fs/* methods): the directory itself (LocalDirVolume, so paths stay confined), and each
// mutation flushed by the mount before it returns, so every other reader of the workspace (the
// agent's afs MCP server, another machine) sees it at once.
import type { Hash } from "../core/hash.js";
import type { LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
import type { MutationResult, OpenFile, Stat, Volume, WriteOptions } from "../volume/volume.js";

export class MountedVolume implements Volume {
  readonly label: string;

  constructor(
    private readonly local: LocalDirVolume,
    /** Uploads what changed in the directory (and applies what arrived) before resolving. */
    private readonly flush: () => Promise<void>,
  ) {
    this.label = local.label;
  }

  stat(path: string): Promise<Stat | null> {
    return this.local.stat(path);
  }

  readFile(path: string): Promise<Buffer> {
    return this.local.readFile(path);
  }

  openFile(path: string): Promise<OpenFile> {
    return this.local.openFile(path);
  }

  realPath(path: string, options?: { entry?: boolean }): Promise<string> {
    return this.local.realPath(path, options);
  }

  list(path: string): Promise<Stat[]> {
    return this.local.list(path);
  }

  walk(path: string, maxDepth?: number): AsyncIterable<Stat> {
    return this.local.walk(path, maxDepth);
  }

  async writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult> {
    return this.flushed(await this.local.writeFile(path, data, options));
  }

  async mkdir(path: string): Promise<MutationResult> {
    return this.flushed(await this.local.mkdir(path));
  }

  async remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult> {
    return this.flushed(await this.local.remove(path, options));
  }

  async rename(from: string, to: string, options: { overwrite?: boolean }): Promise<MutationResult> {
    return this.flushed(await this.local.rename(from, to, options));
  }

  private async flushed(result: MutationResult): Promise<MutationResult> {
    await this.flush();
    return result;
  }
}
