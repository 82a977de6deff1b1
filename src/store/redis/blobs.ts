// Content-addressed objects in Redis: trees and small blobs as one hash each, blobs over
// `chunkBytes` as a list of chunk hashes naming chunks stored once each (chunking.ts), so no
// value exceeds a few MiB and a range reads only its chunks. Objects are global and written
// idempotently before anything references them; the index sets only serve listing and gc.
import { randomUUID } from "node:crypto";
import { AfsError } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import { encode } from "../blob-codec.js";
import { type BlobMeta, type BlobPort, ChunkedBlobReader } from "../chunked-blobs.js";
import { badLayout, CHUNK_BYTES, type ChunkRef, chunksOf, storeStream, toBuffer } from "../chunking.js";
import type { NewBlob } from "../store.js";
import { arr, batched, buf, num, type RedisLink, str } from "./client.js";
import type { Keys, ObjectKind } from "./keys.js";
import { DELETE_OBJECT, LINK_BLOB, PUT_OBJECT, TOUCH_CHUNK } from "./scripts.js";

/** Hashes per page when listing an index, and layout entries per LRANGE / RPUSH. */
export const PAGE = 1000;
/** A draft layout of a put that died half way expires instead of staying forever. */
const DRAFT_TTL_SECONDS = 3600;

export interface RedisBlobMeta extends BlobMeta {
  /** Chunk size and count when chunked. */
  chunkBytes: number;
  chunks: number;
}

export class RedisBlobs {
  readonly chunkBytes = CHUNK_BYTES;
  /** Reads go through the one chunked-blob reader (chunked-blobs.ts) over this store's port. */
  readonly read: ChunkedBlobReader<RedisBlobMeta>;

  constructor(
    private readonly link: RedisLink,
    private readonly keys: Keys,
  ) {
    this.read = new ChunkedBlobReader(redisPort(link, keys));
  }

  // --- writing -------------------------------------------------------------------------------

  /** Stores objects that are not there yet; a tree or a blob up to chunkBytes is one value. */
  async put(kind: ObjectKind, objects: ReadonlyArray<NewBlob>): Promise<void> {
    const distinct = [...new Map(objects.map((o) => [o.hash, o])).values()];
    if (distinct.length === 0) return;
    // The index first: an entry whose object never arrived is skipped by readers, while an object
    // missing from the index would never be listed (nor collected). Commands on one connection run
    // in the order they are sent, so the objects follow without waiting for the index's reply.
    const now = String(Date.now());
    await Promise.all([
      this.addToIndex(
        kind,
        distinct.map((o) => o.hash),
      ),
      batched(distinct, async ({ hash, data, stored }) => {
        const bytes = toBuffer(data);
        if (kind === "blob" && bytes.byteLength > this.chunkBytes) return this.putChunkedWhole(hash, bytes);
        const value = kind !== "blob" ? bytes : stored ? toBuffer(stored) : encode(bytes);
        await this.link.run(PUT_OBJECT, [this.keys.object(kind, hash)], [String(bytes.byteLength), now, value]);
      }),
    ]);
  }

  async putStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }> {
    return storeStream(source, this.chunkBytes, {
      putChunk: (hash, data) => this.putChunk(hash, data),
      putInline: (hash, data) => this.put("blob", [{ hash, data }]),
      putChunked: (hash, size, chunks) => this.linkChunks(hash, size, chunks),
    });
  }

  private async putChunkedWhole(hash: Hash, data: Buffer): Promise<void> {
    if ((await this.link.read(["EXISTS", this.keys.object("blob", hash)])) === 1) return;
    const pieces = chunksOf(data, this.chunkBytes);
    for (const p of pieces) await this.putChunk(p.ref.hash, p.data);
    await this.linkChunks(
      hash,
      data.byteLength,
      pieces.map((p) => p.ref),
    );
  }

  /** Stores a chunk unless present; a present one gets a fresh time, so a sweep running now spares it. */
  private async putChunk(hash: Hash, data: Buffer): Promise<void> {
    const key = this.keys.chunk(hash);
    const now = String(Date.now());
    if ((await this.link.run(TOUCH_CHUNK, [key], [now])) === 1) return;
    await Promise.all([
      this.link.write(["ZADD", this.keys.index("chunk"), "0", hash]),
      this.link.run(PUT_OBJECT, [key], [String(data.byteLength), now, encode(data)]),
    ]);
  }

  private async linkChunks(hash: Hash, size: number, chunks: readonly ChunkRef[]): Promise<void> {
    const cb = chunks[0]?.size ?? 0;
    chunks.forEach((c, i) => {
      if (c.start !== i * cb || (c.size !== cb && i !== chunks.length - 1)) {
        throw new AfsError("INTERNAL", `content ${hash} is not laid out in fixed-size chunks`, { hash });
      }
    });
    // gc may have swept a chunk that was already present (an orphan) between its put and now.
    const present = await batched(chunks, (c) => this.link.read(["EXISTS", this.keys.chunk(c.hash)]));
    if (present.some((n) => n !== 1)) {
      throw new AfsError(
        "CONFLICT",
        `chunks of content ${hash} were removed by a concurrent gc while it was stored; retry`,
        {
          hash,
        },
      );
    }
    await this.addToIndex("blob", [hash]);
    const draft = this.keys.layoutDraft(hash, randomUUID());
    for (let i = 0; i < chunks.length; i += PAGE) {
      await this.link.write(["RPUSH", draft, ...chunks.slice(i, i + PAGE).map((c) => c.hash)]);
    }
    await this.link.write(["EXPIRE", draft, String(DRAFT_TTL_SECONDS)]);
    const linked = await this.link.run(
      LINK_BLOB,
      [this.keys.object("blob", hash), this.keys.layout(hash), draft],
      [String(size), String(Date.now()), String(cb), String(chunks.length)],
    );
    if (linked === -1)
      throw new AfsError("CONFLICT", `the chunk list of content ${hash} expired while it was stored; retry`);
  }

  /** Sends every page at once (in order, before anything the caller sends after it). */
  private async addToIndex(kind: ObjectKind, hashes: readonly Hash[]): Promise<void> {
    const pages: Promise<unknown>[] = [];
    for (let i = 0; i < hashes.length; i += PAGE) {
      pages.push(
        this.link.write(["ZADD", this.keys.index(kind), ...hashes.slice(i, i + PAGE).flatMap((h) => ["0", h])]),
      );
    }
    await Promise.all(pages);
  }

  // --- reading -------------------------------------------------------------------------------

  async getTree(hash: Hash): Promise<Buffer | null> {
    return buf(await this.link.read(["HGET", this.keys.object("tree", hash), "d"]));
  }

  async has(hashes: readonly Hash[]): Promise<Set<Hash>> {
    const found = await batched(hashes, (h) => this.link.read(["EXISTS", this.keys.object("blob", h)]));
    return new Set(hashes.filter((_, i) => found[i] === 1));
  }

  // --- listing and deleting --------------------------------------------------------------------

  /** Every indexed object that exists, by hash, a page at a time (an index entry without its object is skipped). */
  async *list(kind: ObjectKind): AsyncGenerator<{ hash: Hash; createdAt: number; size: number }> {
    for await (const page of indexPages(this.link, this.keys, kind)) {
      const metas = await Promise.all(page.map((h) => this.link.read(["HMGET", this.keys.object(kind, h), "s", "t"])));
      for (const [i, hash] of page.entries()) {
        const [s, t] = arr(metas[i] ?? null);
        if (s === null || s === undefined) continue;
        yield { hash, createdAt: num(t ?? null) ?? 0, size: num(s) ?? 0 };
      }
    }
  }

  async delete(kind: ObjectKind, hashes: readonly Hash[]): Promise<number> {
    const distinct = [...new Set(hashes)];
    const gone = await batched(distinct, (h) => {
      const keys = [this.keys.object(kind, h), kind === "blob" ? this.keys.layout(h) : this.keys.object(kind, h)];
      return this.link.run(DELETE_OBJECT, keys, []);
    });
    for (let i = 0; i < distinct.length; i += PAGE) {
      await this.link.write(["ZREM", this.keys.index(kind), ...distinct.slice(i, i + PAGE)]);
    }
    return gone.reduce<number>((n, g) => n + (g === 1 ? 1 : 0), 0);
  }
}

/** A blob's size and, when chunked, its chunk size and count; null when it is not stored. */
export async function blobMeta(link: RedisLink, keys: Keys, hash: Hash): Promise<RedisBlobMeta | null> {
  return toMeta(arr(await link.read(["HMGET", keys.object("blob", hash), "s", "n", "cb"])));
}

/**
 * How the shared reader reads this store. A chunked blob's chunks are fixed-size, so the chunk
 * holding a byte is found by division, and a layout entry is only the chunk's hash.
 */
function redisPort(link: RedisLink, keys: Keys): BlobPort<RedisBlobMeta> {
  /** Layout entries from..to (inclusive) with their offsets. */
  const layout = async (hash: Hash, meta: RedisBlobMeta, from: number, to: number): Promise<ChunkRef[]> => {
    const hashes = arr(await link.read(["LRANGE", keys.layout(hash), String(from), String(to)]));
    if (hashes.length !== to - from + 1) throw badLayout(hash);
    return hashes.map((h, j) => {
      const start = (from + j) * meta.chunkBytes;
      return { start, size: Math.min(meta.chunkBytes, meta.size - start), hash: str(h) as Hash };
    });
  };
  return {
    remote: true,
    meta: (hash) => blobMeta(link, keys, hash),
    metaWithValue: async (hash, max) => {
      // Size, layout and the inline value in one round trip (a chunked blob's "d" is empty).
      const reply = arr(await link.read(["HMGET", keys.object("blob", hash), "s", "n", "cb", "d"]));
      const meta = toMeta(reply);
      if (!meta) return null;
      return { ...meta, stored: meta.chunked || meta.size > max ? null : buf(reply[3] ?? null) };
    },
    inlineValue: async (hash) => buf(await link.read(["HGET", keys.object("blob", hash), "d"])),
    chunksCovering: async (hash, meta, spans) => {
      // The chunks some span touches, a window of up to PAGE entries per LRANGE.
      const touched = new Set<number>();
      for (const { from, to } of spans) {
        for (let i = Math.floor(from / meta.chunkBytes); i <= Math.floor((to - 1) / meta.chunkBytes); i++)
          touched.add(i);
      }
      const indexes = [...touched].sort((a, b) => a - b);
      const refs: ChunkRef[] = [];
      for (let i = 0; i < indexes.length; ) {
        let j = i;
        while (j + 1 < indexes.length && (indexes[j + 1] as number) - (indexes[i] as number) < PAGE) j++;
        refs.push(...(await layout(hash, meta, indexes[i] as number, indexes[j] as number)));
        i = j + 1;
      }
      return refs;
    },
    chunksFrom: (hash, meta, start, limit) => {
      const first = start / meta.chunkBytes;
      if (!Number.isInteger(first)) throw badLayout(hash);
      return layout(hash, meta, first, Math.min(meta.chunks, first + limit) - 1);
    },
    chunkValue: async (hash) => {
      const reply = arr(await link.read(["HMGET", keys.chunk(hash), "s", "d"]));
      const data = buf(reply[1] ?? null);
      return data ? { size: num(reply[0] ?? null) ?? -1, data } : null;
    },
  };
}

/** The hashes of an object index in pages of PAGE, in hash order. */
export async function* indexPages(link: RedisLink, keys: Keys, kind: ObjectKind | "chunk"): AsyncGenerator<Hash[]> {
  let after = "-";
  for (;;) {
    const reply = await link.read(["ZRANGEBYLEX", keys.index(kind), after, "+", "LIMIT", "0", String(PAGE)]);
    const page = arr(reply).map((h) => str(h) as Hash);
    if (page.length > 0) yield page;
    const last = page[page.length - 1];
    if (!last || page.length < PAGE) return;
    after = `(${last}`;
  }
}

function toMeta(reply: ReturnType<typeof arr>): RedisBlobMeta | null {
  const size = num(reply[0] ?? null);
  if (size === null) return null;
  const chunks = num(reply[1] ?? null) ?? 0;
  return { size, chunked: chunks > 0, chunks, chunkBytes: num(reply[2] ?? null) ?? 0 };
}
