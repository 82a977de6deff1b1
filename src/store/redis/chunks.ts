// The chunk side of garbage collection and fsck for the Redis store: sweeping chunks no blob's
// layout names any more, and checking that every chunked blob's chunks are there and intact.
import { createHash } from "node:crypto";
import type { Hash } from "../../core/hash.js";
import { decode } from "../blob-codec.js";
import { blobMeta, indexPages, PAGE, type RedisBlobMeta } from "./blobs.js";
import { arr, buf, num, type RedisLink, str } from "./client.js";
import type { Keys } from "./keys.js";
import { SWEEP_CHUNK } from "./scripts.js";

export class RedisChunks {
  constructor(
    private readonly link: RedisLink,
    private readonly keys: Keys,
  ) {}

  /** Deletes chunks no blob's layout names, stored before `createdBefore` (younger ones may belong to a put in flight). */
  async sweep(createdBefore: number): Promise<{ deleted: number; bytes: number }> {
    const used = new Set<string>();
    for await (const { chunks } of this.chunkedBlobs()) for (const c of chunks) used.add(c);
    let deleted = 0;
    let bytes = 0;
    for await (const page of indexPages(this.link, this.keys, "chunk")) {
      const unused = page.filter((h) => !used.has(h));
      const results = await Promise.all(
        unused.map((h) => this.link.run(SWEEP_CHUNK, [this.keys.chunk(h)], [String(createdBefore)])),
      );
      const dropped: string[] = [];
      unused.forEach((h, i) => {
        const r = results[i] as number;
        if (r >= 0) {
          deleted++;
          bytes += r;
        }
        if (r !== -1) dropped.push(h);
      });
      if (dropped.length > 0) await this.link.write(["ZREM", this.keys.index("chunk"), ...dropped]);
    }
    return { deleted, bytes };
  }

  /** Missing and corrupt chunks and broken layouts, each naming the blob it belongs to. */
  async problems(): Promise<string[]> {
    const problems: string[] = [];
    const users = new Map<string, string[]>();
    for await (const { hash, meta, chunks } of this.chunkedBlobs()) {
      if (chunks.length !== meta.chunks || (meta.chunks - 1) * meta.chunkBytes >= meta.size) {
        const laid = chunks.length === 0 ? 0 : Math.min(meta.size, chunks.length * meta.chunkBytes);
        problems.push(`blob ${hash}: its chunks hold ${laid} bytes, not its ${meta.size}`);
      }
      for (const [i, c] of chunks.entries()) {
        const start = i * meta.chunkBytes;
        const where = users.get(c) ?? [];
        if (where.length < 5) where.push(`blob ${hash} at byte ${start}`);
        users.set(c, where);
        if ((await this.link.read(["EXISTS", this.keys.chunk(c)])) !== 1) {
          problems.push(`blob ${hash}: chunk ${c} at byte ${start} is missing`);
        }
      }
    }
    for await (const page of indexPages(this.link, this.keys, "chunk")) {
      for (const c of page) {
        const [s, d] = arr(await this.link.read(["HMGET", this.keys.chunk(c), "s", "d"]));
        const data = buf(d ?? null);
        if (!data) continue;
        let raw: Buffer | null = null;
        try {
          raw = decode(data, num(s ?? null) ?? -1, `chunk ${c}`);
        } catch {}
        if (!raw || createHash("sha256").update(raw).digest("hex") !== c) {
          problems.push(`chunk ${c} (in ${users.get(c)?.join(", ") || "no blob"}) does not match its content hash`);
        }
      }
    }
    return problems;
  }

  private async *chunkedBlobs(): AsyncGenerator<{ hash: Hash; meta: RedisBlobMeta; chunks: string[] }> {
    for await (const page of indexPages(this.link, this.keys, "blob")) {
      for (const hash of page) {
        const meta = await blobMeta(this.link, this.keys, hash);
        if (!meta || meta.chunks === 0) continue;
        const chunks: string[] = [];
        for (let i = 0; ; i += PAGE) {
          const part = arr(await this.link.read(["LRANGE", this.keys.layout(hash), String(i), String(i + PAGE - 1)]));
          for (const c of part) chunks.push(str(c) ?? "");
          if (part.length < PAGE) break;
        }
        yield { hash, meta, chunks };
      }
    }
  }
}
