// How large contents are laid out in any Store: fixed-size chunks, each stored once under its own
// SHA-256, while the blob keeps the SHA-256 of its whole bytes. Shared by every Store so the
// streaming put (hash and store in one pass, one chunk in memory) is written once.
import { createHash } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";

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
