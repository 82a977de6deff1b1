// Moving one file's bytes between disk and the store without holding them whole: store a file as
// a stream, write a blob to a file chunk by chunk (leaving zero chunks as holes), hash a file, and
// open a stored blob for ranged reads (the workspace volume's OpenFile).
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { AfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../core/hash.js";
import { MAX_WHOLE_BLOB_BYTES } from "../store/chunking.js";
import type { Store } from "../store/store.js";
import type { OpenFile } from "../volume/volume.js";

/** Read size for streamed files: a chunk, so the next read is in flight while one is hashed. */
const READ_BYTES = 4 * 1024 * 1024;

/**
 * Stored content `hash` of `size` bytes as an OpenFile. Content never changes under its hash, so
 * every read is consistent; a read of the whole of a small blob is one getBlob (one query).
 */
export function openBlob(store: Store, hash: Hash, size: number): OpenFile {
  const missing = (): AfsError =>
    new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`, { hash });
  return {
    size,
    sha256: hash,
    hash: async () => hash,
    async read(offset, length) {
      if (hash === EMPTY_SHA256 || length <= 0 || offset >= size) return Buffer.alloc(0);
      const whole = offset === 0 && length >= size && size <= MAX_WHOLE_BLOB_BYTES;
      const data = whole ? await store.getBlob(hash) : await store.readBlobRange(hash, offset, length);
      if (!data) throw missing();
      return data;
    },
    async *stream() {
      if (hash === EMPTY_SHA256) return;
      yield* store.blobStream(hash);
    },
    close: async () => {},
  };
}

/** Stores a file in one streamed pass; `onBytes` hears of each piece read (for progress). */
export async function storeFile(
  store: Store,
  path: string,
  onBytes?: (n: number) => void,
): Promise<{ hash: Hash; size: number }> {
  const stream = createReadStream(path, { highWaterMark: READ_BYTES });
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      onBytes?.(piece.byteLength);
      yield piece;
    }
  }
  return store.putBlobStream(counted());
}

/** SHA-256 of a file, read a piece at a time. */
export async function hashFile(path: string): Promise<Hash> {
  const h = createHash("sha256");
  for await (const piece of createReadStream(path, { highWaterMark: READ_BYTES }) as AsyncIterable<Buffer>) {
    h.update(piece);
  }
  return h.digest("hex");
}

/**
 * Writes blob `hash` (of `size` bytes) to a new file at `path`, a chunk at a time. Runs of zeros
 * as long as a whole piece are skipped and left as holes, so a sparse file exports sparse and
 * byte-exact (holes read as zeros).
 */
export async function writeBlobFile(
  store: Store,
  hash: Hash,
  size: number,
  path: string,
  options: { mode: number; flag?: string },
): Promise<void> {
  const file = await open(path, options.flag ?? "w", options.mode);
  try {
    if (hash !== EMPTY_SHA256) {
      let at = 0;
      for await (const piece of store.blobStream(hash)) {
        if (!isZero(piece)) await writeAll(file, piece, at);
        at += piece.byteLength;
      }
      if (at !== size) {
        throw new AfsError(
          "IO_ERROR",
          `content ${hash} holds ${at} bytes, not the ${size} its entry says; run afs fsck`,
        );
      }
    }
    await file.truncate(size);
  } finally {
    await file.close();
  }
}

async function writeAll(file: Awaited<ReturnType<typeof open>>, data: Buffer, position: number): Promise<void> {
  for (let done = 0; done < data.byteLength; ) {
    const { bytesWritten } = await file.write(data, done, data.byteLength - done, position + done);
    done += bytesWritten;
  }
}

// A scratch buffer of zeros, grown as needed; process-wide on purpose (no caller's state).
let zeros = Buffer.alloc(0);
function isZero(piece: Buffer): boolean {
  if (piece.byteLength < 4096 || piece.byteLength > 8 * 1024 * 1024) return false;
  if (zeros.byteLength < piece.byteLength) zeros = Buffer.alloc(piece.byteLength);
  return piece.equals(zeros.subarray(0, piece.byteLength));
}
