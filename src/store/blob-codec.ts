// How a Store may keep blob and chunk bytes compressed: raw deflate at level 1 (fast, and most of
// zlib's gain on source text), kept only when it saves at least 10%. A stored value shorter than
// the content's size is compressed; one of equal size is raw, so values written before this
// existed read unchanged and no flag is needed.
//
// A value over SEEKABLE_MIN is deflated in 16 KiB segments, each restarting the compressor (a full
// flush), behind a table of their compressed lengths, so a range read inflates only the segments it
// covers: a search reading a few 16 KiB blocks of a large bundle no longer inflates 4 MiB per block.
// It costs ~9% more compressed text than one stream (measured on node_modules) and nothing to read
// whole: the segments together are one valid deflate stream. Binary values (a NUL in their first
// 8 KiB, grep's rule) stay one stream: they lose more (~8% of node_modules' binaries) and searches
// never read them in blocks.
//
//   seekable value: 0xFE, log2(segment bytes), u32 LE segment count n, n × u32 LE compressed lengths,
//   then the segments.
//
// 0xFE's low three bits say "deflate block of the reserved type 3", which no deflate stream starts
// with, so a value written before this format reads as it always did.
import { constants, deflateRawSync, inflateRawSync } from "node:zlib";
import { AfsError } from "../core/errors.js";
import type { Inflater } from "./inflater.js";

/** Compressed values must be at most this fraction of the original to be kept. */
const KEEP_RATIO = 0.9;
/** Bytes tried first on large values: incompressible data (media, archives) is not deflated whole. */
const PROBE_BYTES = 64 * 1024;
/** Values this large or larger are stored seekable: smaller ones are read whole by every reader. */
export const SEEKABLE_MIN = 64 * 1024;
const SEGMENT_SHIFT = 14;
const BINARY_SNIFF_BYTES = 8192;
const SEEKABLE = 0xfe;
const HEADER_BYTES = 6;

/** A range of a value's content, [from, to). */
export interface Span {
  from: number;
  to: number;
}

/** The bytes to store for `data`: deflated when that saves ≥ 10%, else `data` itself. */
export function encode(data: Buffer): Buffer {
  if (data.byteLength < 64) return data;
  if (data.byteLength > 2 * PROBE_BYTES) {
    const probe = data.subarray(0, PROBE_BYTES);
    if (deflateRawSync(probe, { level: 1 }).byteLength > probe.byteLength * KEEP_RATIO) return data;
  }
  const text = !data.subarray(0, BINARY_SNIFF_BYTES).includes(0);
  const packed = text && data.byteLength >= SEEKABLE_MIN ? seekable(data) : deflateRawSync(data, { level: 1 });
  return packed.byteLength <= data.byteLength * KEEP_RATIO ? packed : data;
}

function seekable(data: Buffer): Buffer {
  const segment = 1 << SEGMENT_SHIFT;
  const count = Math.ceil(data.byteLength / segment);
  const header = Buffer.alloc(HEADER_BYTES + 4 * count);
  header[0] = SEEKABLE;
  header[1] = SEGMENT_SHIFT;
  header.writeUInt32LE(count, 2);
  const parts: Buffer[] = [header];
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    const part = deflateRawSync(data.subarray(i * segment, (i + 1) * segment), {
      level: 1,
      // A full flush ends the segment on a byte boundary with the compressor's history cleared, so
      // inflating can start there.
      finishFlush: last ? constants.Z_FINISH : constants.Z_FULL_FLUSH,
    });
    header.writeUInt32LE(part.byteLength, HEADER_BYTES + 4 * i);
    parts.push(part);
  }
  return Buffer.concat(parts);
}

/** How a stored value is laid out: its content as is, one deflate stream, or seekable segments. */
type Format = "raw" | "stream" | "seekable";

const formatOf = (stored: Buffer, size: number): Format =>
  stored.byteLength === size ? "raw" : stored[0] === SEEKABLE ? "seekable" : "stream";

/**
 * The value `encode` would store today for the content of `stored`, when its format differs
 * (a one-stream or raw text value written before seekable values existed); null when the value is
 * already as encode writes it. Only a text value of SEEKABLE_MIN or more can change, so the
 * others are told apart by their header and first bytes, without inflating them whole.
 */
export function reencoded(stored: Buffer, size: number, what: string): Buffer | null {
  const format = formatOf(stored, size);
  if (size < SEEKABLE_MIN || format === "seekable") return null;
  const head = format === "raw" ? stored : decodePrefix(stored, size, BINARY_SNIFF_BYTES, what);
  if (head.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  const fresh = encode(decode(stored, size, what));
  return formatOf(fresh, size) === format ? null : fresh;
}

/** Where a seekable value's segments start in it, and their size; null for any other value. */
function segmentsOf(stored: Buffer, size: number, what: string): { starts: Float64Array; bytes: number } | null {
  if (stored.byteLength === size || stored[0] !== SEEKABLE) return null;
  const shift = stored.byteLength >= HEADER_BYTES ? (stored[1] as number) : 0;
  const count = stored.byteLength >= HEADER_BYTES ? stored.readUInt32LE(2) : -1;
  const bytes = 2 ** shift;
  if (shift < 10 || shift > 30 || count !== Math.ceil(size / bytes) || stored.byteLength < HEADER_BYTES + 4 * count) {
    throw corrupt(what, "its segment table does not fit its size");
  }
  const starts = new Float64Array(count + 1);
  starts[0] = HEADER_BYTES + 4 * count;
  for (let i = 0; i < count; i++) {
    starts[i + 1] = (starts[i] as number) + stored.readUInt32LE(HEADER_BYTES + 4 * i);
  }
  if (starts[count] !== stored.byteLength) throw corrupt(what, "its segments do not add up to its length");
  return { starts, bytes };
}

/** The content of a stored value that holds `size` bytes; throws IO_ERROR if it does not inflate to that. */
export function decode(stored: Buffer, size: number, what: string): Buffer {
  if (stored.byteLength === size) return stored;
  const segments = segmentsOf(stored, size, what);
  return inflate(segments ? stored.subarray(segments.starts[0]) : stored, size, size, what, constants.Z_FINISH);
}

/**
 * decode, inflating with `inflater` (one zlib stream for many small values, inflater.ts) where it
 * can: the result may be the inflater's buffer, valid until its next use. Anything it cannot
 * inflate exactly is decoded (and any corruption reported) by decode.
 */
export function decodeReusing(stored: Buffer, size: number, what: string, inflater: Inflater): Buffer {
  if (stored.byteLength === size) return stored;
  const segments = segmentsOf(stored, size, what);
  return inflater.inflate(segments ? stored.subarray(segments.starts[0]) : stored, size) ?? decode(stored, size, what);
}

/**
 * Bytes [from, to) of the content of a stored value that holds `size`, for each span: a seekable
 * value inflates only the segments a span covers; an older one inflates once, as far as the last
 * span needs (deflate's output for a prefix of its input is a prefix of the whole).
 */
export function decodeSpans(stored: Buffer, size: number, spans: readonly Span[], what: string): Buffer[] {
  if (stored.byteLength === size) return spans.map((s) => stored.subarray(s.from, s.to));
  const segments = segmentsOf(stored, size, what);
  if (!segments) {
    const need = Math.max(0, ...spans.map((s) => s.to));
    const raw = decodePrefix(stored, size, need, what);
    return spans.map((s) => raw.subarray(s.from, s.to));
  }
  const { starts, bytes } = segments;
  return spans.map(({ from, to }) => {
    if (to <= from) return Buffer.alloc(0);
    const first = Math.floor(from / bytes);
    const last = Math.ceil(to / bytes);
    const expect = Math.min(size, last * bytes) - first * bytes;
    const input = stored.subarray(starts[first], starts[last]);
    const raw = inflate(input, expect, expect, what, constants.Z_SYNC_FLUSH);
    return raw.subarray(from - first * bytes, to - first * bytes);
  });
}

/** At least the first `need` bytes of a value in the format before seekable values (see decodeSpans). */
function decodePrefix(stored: Buffer, size: number, need: number, what: string): Buffer {
  if (need * 4 > size * 3) return decode(stored, size, what);
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

/** The largest output chunk inflate asks for: a chunk's worth (4 MiB); a value beyond it is concatenated. */
const MAX_CHUNK = 4 * 1024 * 1024;

function inflate(input: Buffer, expect: number, max: number, what: string, finishFlush: number): Buffer {
  let raw: Buffer;
  try {
    // Output chunks of the expected size: zlib's default (16 KiB) made a small blob a view of a
    // 16 KiB buffer it kept alive (8x the memory of an indexing batch of 2 KiB files), and a large
    // one a list of 16 KiB chunks concatenated at the end. One byte more than expected: a chunk
    // filled exactly makes zlib allocate another to look for more output.
    raw = inflateRawSync(input, {
      maxOutputLength: Math.max(max, 1),
      finishFlush,
      chunkSize: Math.max(constants.Z_MIN_CHUNK, Math.min(expect + 1, MAX_CHUNK)),
    });
  } catch (e) {
    throw corrupt(what, (e as Error).message);
  }
  if (raw.byteLength !== expect) throw corrupt(what, `it holds ${raw.byteLength} bytes, not ${expect}`);
  return raw;
}

const corrupt = (what: string, why: string): AfsError =>
  new AfsError("IO_ERROR", `${what} is corrupt (${why}); run afs fsck`, { what });
