// How a Store may keep blob and chunk bytes compressed: raw deflate at level 1 (fast, and most of
// zlib's gain on source text), kept only when it saves at least 10%. A stored value shorter than
// the content's size is compressed; one of equal size is raw, so values written before this
// existed read unchanged and no flag is needed.
import { constants, deflateRawSync, inflateRawSync } from "node:zlib";
import { AfsError } from "../core/errors.js";

/** Compressed values must be at most this fraction of the original to be kept. */
const KEEP_RATIO = 0.9;
/** Bytes tried first on large values: incompressible data (media, archives) is not deflated whole. */
const PROBE_BYTES = 64 * 1024;

/** The bytes to store for `data`: deflated when that saves ≥ 10%, else `data` itself. */
export function encode(data: Buffer): Buffer {
  if (data.byteLength < 64) return data;
  if (data.byteLength > 2 * PROBE_BYTES) {
    const probe = data.subarray(0, PROBE_BYTES);
    if (deflateRawSync(probe, { level: 1 }).byteLength > probe.byteLength * KEEP_RATIO) return data;
  }
  const packed = deflateRawSync(data, { level: 1 });
  return packed.byteLength <= data.byteLength * KEEP_RATIO ? packed : data;
}

/** The content of a stored value that holds `size` bytes; throws IO_ERROR if it does not inflate to that. */
export function decode(stored: Buffer, size: number, what: string): Buffer {
  if (stored.byteLength === size) return stored;
  let raw: Buffer;
  try {
    raw = inflateRawSync(stored, { maxOutputLength: Math.max(size, 1) });
  } catch (e) {
    throw new AfsError("IO_ERROR", `${what} is corrupt (${(e as Error).message}); run afs fsck`, { what });
  }
  if (raw.byteLength !== size) {
    throw new AfsError("IO_ERROR", `${what} holds ${raw.byteLength} bytes, not ${size}; run afs fsck`, { what });
  }
  return raw;
}

/**
 * At least the first `need` bytes of a stored value that holds `size`: a range read that ends early in
 * a chunk inflates only about as much of it as that takes (deflate's output for a prefix of its input
 * is a prefix of the whole). Falls back to decode, which also reports corruption.
 */
export function decodePrefix(stored: Buffer, size: number, need: number, what: string): Buffer {
  if (stored.byteLength === size || need * 4 > size * 3) return decode(stored, size, what);
  // The input guessed from the mean ratio, with room for a start that compresses less well.
  const guess = Math.ceil((need / size) * stored.byteLength * 1.25) + 16 * 1024;
  if (guess < stored.byteLength) {
    try {
      const raw = inflateRawSync(stored.subarray(0, guess), {
        finishFlush: constants.Z_SYNC_FLUSH,
        maxOutputLength: Math.max(size, 1),
      });
      if (raw.byteLength >= need) return raw;
    } catch {
      // Reported, if the value is corrupt, by the whole decode.
    }
  }
  return decode(stored, size, what);
}
