// How large contents are laid out in any Store: fixed-size chunks, each stored once under its own
// SHA-256, while the blob keeps the SHA-256 of its whole bytes. Shared by every Store so the
// streaming put (hash and store in one pass, one chunk in memory) is written once.
import { createHash } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { decodeSpans, type Span } from "./blob-codec.js";

/**
 * Chunk size. Fixed-size chunks make a range read O(1) to locate and share every identical aligned
 * region (zero runs of sparse files, unchanged prefixes of appended logs). Content-defined chunking
 * would also share after inserts, but agents' large files are mostly binaries, archives and data
 * that are rewritten or appended, and the layout rows record each chunk's offset, so a later
 * store could switch without a format change.
 */
export const CHUNK_BYTES = 4 * 1024 * 1024;

/** The largest blob getBlob returns whole; bigger ones are read with readBlobRange or blobStream. */
export const MAX_WHOLE_BLOB_BYTES = 512 * 1024 * 1024;

/** One chunk of a chunked blob: where it starts in the blob, its size and its hash. */
export interface ChunkRef {
  start: number;
  size: number;
  hash: Hash;
}

/** What a Store provides for storeStream to write into. */
export interface ChunkSink {
  /** Stores one chunk (a no-op when present). `data` is reused after this returns: copy it if kept. */
  putChunk(hash: Hash, data: Buffer): void | Promise<void>;
  /** Records a blob small enough to be one value. */
  putInline(hash: Hash, data: Buffer): void | Promise<void>;
  /** Records a chunked blob from chunks already put. */
  putChunked(hash: Hash, size: number, chunks: readonly ChunkRef[]): void | Promise<void>;
}

/** Yields the source in pieces of exactly `chunkBytes` (the last may be shorter), in one reused buffer. */
export async function* fixedChunks(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  chunkBytes: number,
): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(chunkBytes);
  let fill = 0;
  for await (const part of source) {
    let at = 0;
    while (at < part.byteLength) {
      const n = Math.min(chunkBytes - fill, part.byteLength - at);
      buf.set(part.subarray(at, at + n), fill);
      fill += n;
      at += n;
      if (fill === chunkBytes) {
        yield buf;
        fill = 0;
      }
    }
  }
  if (fill > 0) yield buf.subarray(0, fill);
}

const chunkHash = (data: Uint8Array): Hash => createHash("sha256").update(data).digest("hex");

/**
 * Hashes and stores a stream in one pass. Contents up to `chunkBytes` become one inline value;
 * larger ones become chunks. At most two chunks are in memory at once.
 */
export async function storeStream(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  chunkBytes: number,
  sink: ChunkSink,
): Promise<{ hash: Hash; size: number }> {
  const whole = createHash("sha256");
  const chunks: ChunkRef[] = [];
  let first: Buffer | null = null;
  let size = 0;
  let written = 0;
  const put = async (data: Buffer): Promise<void> => {
    const hash = chunkHash(data);
    await sink.putChunk(hash, data);
    chunks.push({ start: written, size: data.byteLength, hash });
    written += data.byteLength;
  };
  for await (const piece of fixedChunks(source, chunkBytes)) {
    whole.update(piece);
    size += piece.byteLength;
    if (chunks.length === 0 && first === null) {
      // Whether the content stays inline is known only when a second piece arrives or none does.
      first = Buffer.from(piece);
      continue;
    }
    if (first) {
      await put(first);
      first = null;
    }
    await put(piece);
  }
  const hash = whole.digest("hex");
  if (chunks.length === 0) await sink.putInline(hash, first ?? Buffer.alloc(0));
  else await sink.putChunked(hash, size, chunks);
  return { hash, size };
}

/** Splits bytes already in memory into chunk references (for putBlobs of a large content). */
export function chunksOf(data: Buffer, chunkBytes: number): { ref: ChunkRef; data: Buffer }[] {
  const out: { ref: ChunkRef; data: Buffer }[] = [];
  for (let start = 0; start < data.byteLength; start += chunkBytes) {
    const piece = data.subarray(start, Math.min(start + chunkBytes, data.byteLength));
    out.push({ ref: { start, size: piece.byteLength, hash: chunkHash(piece) }, data: piece });
  }
  return out;
}

export function tooLargeWhole(hash: Hash, size: number): AfsError {
  return new AfsError(
    "QUOTA_EXCEEDED",
    `content ${hash} is ${size} bytes, more than the ${MAX_WHOLE_BLOB_BYTES} bytes read whole; read it in ranges or stream it (e.g. afs ws export)`,
    { hash, size, limit: MAX_WHOLE_BLOB_BYTES },
  );
}

/** A part of a blob to read: up to `length` bytes from `offset` (fewer at the end, none past it). */
export interface ByteRange {
  offset: number;
  length: number;
}

/** INVALID_ARGUMENT or QUOTA_EXCEEDED for ranges a Store does not read; the same rule for every Store. */
export function checkRanges(ranges: readonly ByteRange[]): void {
  let total = 0;
  for (const { offset, length } of ranges) {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
      throw new AfsError("INVALID_ARGUMENT", `a range needs a whole offset and length ≥ 0 (got ${offset}, ${length})`);
    }
    total += length;
  }
  if (total > MAX_WHOLE_BLOB_BYTES) {
    throw new AfsError(
      "QUOTA_EXCEEDED",
      `a range read returns at most ${MAX_WHOLE_BLOB_BYTES} bytes; read smaller ranges`,
      { limit: MAX_WHOLE_BLOB_BYTES },
    );
  }
}

/** One stored value of a blob: a chunk, or (start 0, the blob's size) its inline value. */
export interface Piece {
  ref: ChunkRef;
  /** What errors name it by. */
  what: string;
  stored: () => Buffer | Promise<Buffer>;
}

/**
 * Each range's bytes from a blob of `size` stored as `pieces` (in order, covering at least the
 * ranges), fetching each stored value a range touches once and inflating only what the ranges
 * cover (blob-codec's decodeSpans). IO_ERROR (via `gap`) when the pieces leave a hole.
 */
export async function gatherRanges(
  size: number,
  ranges: readonly ByteRange[],
  pieces: readonly Piece[],
  gap: () => AfsError,
): Promise<Buffer[]> {
  const bounds = ranges.map(({ offset, length }) => ({
    from: offset,
    to: Math.max(offset, Math.min(size, offset + length)),
  }));
  const parts: Buffer[][] = bounds.map(() => []);
  for (const piece of pieces) {
    const { start, size: bytes } = piece.ref;
    const spans: Span[] = [];
    const owners: number[] = [];
    bounds.forEach(({ from, to }, i) => {
      if (to <= start || from >= start + bytes || to <= from) return;
      spans.push({ from: Math.max(from, start) - start, to: Math.min(to, start + bytes) - start });
      owners.push(i);
    });
    if (spans.length === 0) continue;
    const decoded = decodeSpans(await piece.stored(), bytes, spans, piece.what);
    for (const [j, i] of owners.entries()) parts[i]?.push(decoded[j] as Buffer);
  }
  return parts.map((p, i) => {
    const { from, to } = bounds[i] as Span;
    // A range within one stored value is its inflated span as it is; no copy.
    const out = p.length === 1 ? (p[0] as Buffer) : Buffer.concat(p);
    if (out.byteLength !== to - from) throw gap();
    return out;
  });
}

/** A chunked blob whose chunk is gone: named, so fsck and readers can say which. */
export const missingChunk = (hash: Hash, ref: ChunkRef): AfsError =>
  new AfsError("IO_ERROR", `chunk ${ref.hash} at byte ${ref.start} of content ${hash} is missing; run afs fsck`, {
    hash,
    chunk: ref.hash,
    start: ref.start,
  });

/** A chunk list that does not cover the blob's bytes end to end. */
export const badLayout = (hash: Hash): AfsError =>
  new AfsError("IO_ERROR", `the chunk list of content ${hash} has a gap; run afs fsck`, { hash });

/** A view of the bytes as a Buffer, without copying. */
export const toBuffer = (data: Uint8Array): Buffer =>
  Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
