// The one reader of stored blob content, over a small port each store implements (BlobPort): a
// blob is one inline value or a list of 4 MiB chunks (chunking.ts), each value possibly deflated
// in seekable segments (blob-codec.ts). Whole reads, ranges (each stored value read once, only the
// covered segments inflated) and streams are written here once, with every layout check.
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { decode } from "./blob-codec.js";
import {
  type ByteRange,
  badLayout,
  type ChunkRef,
  gatherRanges,
  MAX_WHOLE_BLOB_BYTES,
  missingChunk,
  type Piece,
  tooLargeWhole,
} from "./chunking.js";

type Awaitable<T> = T | Promise<T>;

/** What a store knows of a blob before reading it; a port may carry more (chunk size and count). */
export interface BlobMeta {
  size: number;
  /** Stored as chunks (else as one inline value). */
  chunked: boolean;
}

/** A stored value and the size of the bytes it decodes to. */
export interface StoredValue {
  size: number;
  data: Buffer;
}

/** The primitives a store supplies for reading blobs: its values as blob-codec wrote them. */
export interface BlobPort<M extends BlobMeta = BlobMeta> {
  /**
   * Values live across a network: the reader fetches every value a read needs at once (their
   * round trips overlap) instead of one after another as it decodes them.
   */
  readonly remote: boolean;
  /** null when the blob is not stored. */
  meta(hash: Hash): Awaitable<M | null>;
  /** The meta and, for an inline blob of at most `max` bytes, its value (one round trip where the store can). */
  metaWithValue(hash: Hash, max: number): Awaitable<(M & { stored: Buffer | null }) | null>;
  /** An inline blob's stored value; null when gone. */
  inlineValue(hash: Hash): Awaitable<Buffer | null>;
  /** The chunks of a chunked blob covering every span (bytes from..to), in order; more are allowed. */
  chunksCovering(hash: Hash, meta: M, spans: readonly { from: number; to: number }[]): Awaitable<ChunkRef[]>;
  /** Up to `limit` chunks in order, the first starting at byte `start`. */
  chunksFrom(hash: Hash, meta: M, start: number, limit: number): Awaitable<ChunkRef[]>;
  /** A chunk's stored value; null when gone. */
  chunkValue(hash: Hash): Awaitable<StoredValue | null>;
}

/** Chunk references per request while streaming, so memory and open statements stay bounded. */
const STREAM_PAGE = 64;

const notStored = (hash: Hash): AfsError =>
  new AfsError("NOT_FOUND", `content ${hash} is not in the store; run afs fsck`, { hash });

export class ChunkedBlobReader<M extends BlobMeta> {
  constructor(private readonly port: BlobPort<M>) {}

  async size(hash: Hash): Promise<number | null> {
    return (await this.port.meta(hash))?.size ?? null;
  }

  /** The whole blob; QUOTA_EXCEEDED over MAX_WHOLE_BLOB_BYTES (also for a large blob stored inline by an older layout). */
  async get(hash: Hash): Promise<Buffer | null> {
    const meta = await this.port.metaWithValue(hash, MAX_WHOLE_BLOB_BYTES);
    if (!meta) return null;
    if (meta.size > MAX_WHOLE_BLOB_BYTES) throw tooLargeWhole(hash, meta.size);
    if (meta.chunked) return this.whole(hash, meta);
    return decode(meta.stored ?? (await this.inline(hash)), meta.size, `content ${hash}`);
  }

  /** Each range's bytes (see Store.readBlobRanges; checked by checked-store.ts); null when the blob is not stored. */
  async ranges(hash: Hash, ranges: readonly ByteRange[]): Promise<Buffer[] | null> {
    const meta = await this.port.meta(hash);
    if (!meta) return null;
    const wanted = ranges
      .filter((r) => r.length > 0 && r.offset < meta.size)
      .map((r) => ({ from: r.offset, to: Math.min(meta.size, r.offset + r.length) }));
    if (wanted.length === 0) return ranges.map(() => Buffer.alloc(0));
    if (!meta.chunked) {
      const stored = this.fetch(() => this.inline(hash));
      const inline: Piece = { ref: { start: 0, size: meta.size, hash }, what: `content ${hash}`, stored };
      return gatherRanges(meta.size, ranges, [inline], () => badLayout(hash));
    }
    const refs = await this.port.chunksCovering(hash, meta, wanted);
    const touched = refs.filter((ref) => wanted.some((w) => w.from < ref.start + ref.size && w.to > ref.start));
    const pieces = touched.map(
      (ref): Piece => ({ ref, what: chunkName(hash, ref), stored: this.fetch(() => this.stored(hash, ref)) }),
    );
    return gatherRanges(meta.size, ranges, pieces, () => badLayout(hash));
  }

  /** The blob's bytes chunk by chunk; NOT_FOUND when it is not stored. */
  async *stream(hash: Hash): AsyncGenerator<Buffer> {
    const meta = await this.port.meta(hash);
    if (!meta) throw notStored(hash);
    if (!meta.chunked) {
      const data = decode(await this.inline(hash), meta.size, `content ${hash}`);
      if (data.byteLength > 0) yield data;
      return;
    }
    let next = 0;
    while (next < meta.size) {
      const page = await this.port.chunksFrom(hash, meta, next, STREAM_PAGE);
      if (page.length === 0) throw badLayout(hash);
      // One chunk at a time, even remote: a stream's memory stays at one chunk whatever the page.
      for (const ref of page) {
        if (ref.start !== next) throw badLayout(hash);
        const data = decode(await this.stored(hash, ref), ref.size, chunkName(hash, ref));
        next += data.byteLength;
        yield data;
      }
    }
  }

  /** A chunked blob's bytes in one buffer, each chunk decoded straight into place. */
  private async whole(hash: Hash, meta: M): Promise<Buffer> {
    const refs = await this.port.chunksCovering(hash, meta, [{ from: 0, to: meta.size }]);
    const values = refs.map((ref) => this.fetch(() => this.stored(hash, ref)));
    const out = Buffer.allocUnsafe(meta.size);
    let filled = 0;
    for (const [i, ref] of refs.entries()) {
      if (ref.start !== filled) throw badLayout(hash);
      filled += decode(await (values[i] as () => Promise<Buffer>)(), ref.size, chunkName(hash, ref)).copy(out, filled);
    }
    if (filled !== meta.size) throw badLayout(hash);
    return out;
  }

  /**
   * A value to read later: on a remote store fetched now, alongside the others (a failure is
   * reported where it is awaited, or not at all when an earlier one failed first); on a local one
   * read when needed, so a large read holds one stored value at a time.
   */
  private fetch(read: () => Promise<Buffer>): () => Promise<Buffer> {
    if (!this.port.remote) return read;
    const early = read();
    early.catch(() => undefined);
    return () => early;
  }

  private async inline(hash: Hash): Promise<Buffer> {
    const stored = await this.port.inlineValue(hash);
    if (!stored) throw notStored(hash);
    return stored;
  }

  /** A chunk's stored value, as blob-codec wrote it: there, and of the size the layout says. */
  private async stored(blob: Hash, ref: ChunkRef): Promise<Buffer> {
    const value = await this.port.chunkValue(ref.hash);
    if (!value) throw missingChunk(blob, ref);
    if (value.size !== ref.size) throw badLayout(blob);
    return value.data;
  }
}

const chunkName = (blob: Hash, ref: ChunkRef): string => `chunk ${ref.hash} at byte ${ref.start} of content ${blob}`;
