// Chunked uploads for files/write with offset: chunks are appended to a temp file outside every
// served tree, each starting where the previous ended, and the file appears whole (one atomic
// Volume.writeFile) when the final chunk lands. Bounded in size; cancelled by revocation.
import { appendFile, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AfsError } from "../../core/errors.js";

interface Upload {
  server: string;
  /** Consent key of the file being written. */
  key: string;
  file: string;
  size: number;
  lastUsed: number;
}

export const DEFAULT_MAX_UPLOAD_BYTES = 1024 * 1024 * 1024;
const IDLE_MS = 10 * 60 * 1000;

export class Staging {
  private readonly uploads = new Map<string, Upload>();
  private seq = 0;

  private constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  static async open(maxBytes = DEFAULT_MAX_UPLOAD_BYTES): Promise<Staging> {
    return new Staging(await mkdtemp(join(tmpdir(), "afs-broker-")), maxBytes);
  }

  /** Appends one chunk; returns the staged size. Offset 0 starts (or restarts) the upload. */
  async append(server: string, key: string, offset: number, data: Uint8Array): Promise<number> {
    this.expire();
    const id = `${server}\0${key}`;
    let up = this.uploads.get(id);
    if (offset === 0) {
      if (up) await rm(up.file, { force: true });
      up = { server, key, file: join(this.dir, `${++this.seq}.part`), size: 0, lastUsed: Date.now() };
      this.uploads.set(id, up);
    }
    if (!up || offset !== up.size) {
      const expectedOffset = up?.size ?? 0;
      throw new AfsError(
        "INVALID_ARGUMENT",
        up
          ? `this chunk starts at ${offset} but the upload so far ends at ${expectedOffset}; send the chunk that starts there`
          : "no upload in progress for this path; start one with offset 0",
        { expectedOffset },
      );
    }
    if (up.size + data.length > this.maxBytes) {
      await this.drop(id);
      throw new AfsError("QUOTA_EXCEEDED", `the upload would pass the ${this.maxBytes}-byte limit for one file`, {
        limit: this.maxBytes,
      });
    }
    await appendFile(up.file, data, { mode: 0o600 });
    up.size += data.length;
    up.lastUsed = Date.now();
    return up.size;
  }

  /** The staged bytes of a finished upload, which is then forgotten. */
  async take(server: string, key: string): Promise<Buffer> {
    const id = `${server}\0${key}`;
    const up = this.uploads.get(id);
    if (!up) throw new AfsError("INVALID_ARGUMENT", "no upload in progress for this path; start one with offset 0");
    try {
      return await readFile(up.file);
    } finally {
      await this.drop(id);
    }
  }

  /** Drops the uploads `which` selects (revocation, a root removed). */
  async cancel(which: (server: string, key: string) => boolean): Promise<void> {
    for (const [id, up] of [...this.uploads]) if (which(up.server, up.key)) await this.drop(id);
  }

  entries(): { server: string; key: string }[] {
    return [...this.uploads.values()].map(({ server, key }) => ({ server, key }));
  }

  async close(): Promise<void> {
    this.uploads.clear();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async drop(id: string): Promise<void> {
    const up = this.uploads.get(id);
    this.uploads.delete(id);
    if (up) await rm(up.file, { force: true });
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, up] of [...this.uploads]) if (now - up.lastUsed > IDLE_MS) void this.drop(id);
  }
}
