// One batch of an import's small files read, hashed and encoded (blob-codec's deflate) in one go,
// and packed into one buffer: a worker thread (import-worker.ts) sends it back to the main thread
// with the buffer transferred, not copied, and the main thread stores the values as they are.
import { readFileSync } from "node:fs";
import { type Hash, sha256 } from "../core/hash.js";
import { encode } from "../store/blob-codec.js";

/** A failed read, as plain data (an Error does not cross threads with its errno code). */
export interface ReadFailure {
  code: string | undefined;
  message: string;
}

/**
 * The files of a batch in order: file i's content is `sizes[i]` bytes of `buffer` from `offsets[i]`,
 * followed by its stored value (`storedSizes[i]` bytes) when encoding changed it (-1: stored as is).
 */
export interface EncodedBatch {
  buffer: ArrayBuffer;
  offsets: number[];
  sizes: number[];
  storedSizes: number[];
  hashes: Hash[];
  /** Null where the read worked. */
  failures: (ReadFailure | null)[];
}

/** One file of a batch, unpacked: views of the batch's buffer. */
export interface EncodedFile {
  hash: Hash;
  data: Buffer;
  stored: Buffer;
}

export function encodeFiles(paths: readonly string[]): EncodedBatch {
  const datas: Buffer[] = [];
  const storeds: (Buffer | null)[] = [];
  const hashes: Hash[] = [];
  const failures: (ReadFailure | null)[] = [];
  let total = 0;
  for (const path of paths) {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      failures.push({ code: err.code, message: err.message });
      datas.push(EMPTY);
      storeds.push(null);
      hashes.push("");
      continue;
    }
    const stored = encode(data);
    failures.push(null);
    datas.push(data);
    storeds.push(stored === data ? null : stored);
    hashes.push(sha256(data));
    total += data.byteLength + (stored === data ? 0 : stored.byteLength);
  }
  // Unpooled, so its ArrayBuffer is its own (a pooled one cannot be transferred).
  const packed = Buffer.allocUnsafeSlow(total);
  const offsets: number[] = [];
  const sizes: number[] = [];
  const storedSizes: number[] = [];
  let at = 0;
  for (let i = 0; i < datas.length; i++) {
    const data = datas[i] as Buffer;
    const stored = storeds[i];
    offsets.push(at);
    sizes.push(data.byteLength);
    at += data.copy(packed, at);
    storedSizes.push(stored ? stored.byteLength : -1);
    if (stored) at += stored.copy(packed, at);
  }
  return { buffer: packed.buffer as ArrayBuffer, offsets, sizes, storedSizes, hashes, failures };
}

/** File i of a batch, or the reason its read failed. */
export function fileOf(batch: EncodedBatch, i: number): EncodedFile | ReadFailure {
  const failure = batch.failures[i];
  if (failure) return failure;
  const at = batch.offsets[i] as number;
  const size = batch.sizes[i] as number;
  const storedSize = batch.storedSizes[i] as number;
  const data = Buffer.from(batch.buffer, at, size);
  const stored = storedSize < 0 ? data : Buffer.from(batch.buffer, at + size, storedSize);
  return { hash: batch.hashes[i] as Hash, data, stored };
}

/** The failure as an Error carrying its errno code, for toAfsError. */
export const failureError = (f: ReadFailure): Error => Object.assign(new Error(f.message), { code: f.code });

const EMPTY = Buffer.alloc(0);
