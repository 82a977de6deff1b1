// How the content index cuts a text into blocks: runs of whole lines of about 16 KiB, so a search
// reads only the blocks of a large file that may hold all of a literal's trigrams. Lines never straddle
// blocks (a line's match lies in one block), and the cut depends only on the bytes.

/** Most blocks of one text; the index numbers a block's row blob id × BLOCKS_PER_BLOB + block. */
export const BLOCKS_PER_BLOB = 4096;
const BLOCK_BYTES = 16 * 1024;

/**
 * Block boundaries of a text of `length` bytes: [0, end of block 0, …, length]. `nextLf(from)` is
 * the offset of the first LF at or after `from`, or -1. A text shorter than two blocks is one block.
 */
export function blockBounds(length: number, nextLf: (from: number) => number): number[] {
  const size = Math.max(BLOCK_BYTES, Math.ceil(length / (BLOCKS_PER_BLOB - 1)));
  const bounds = [0];
  if (length < 2 * size) {
    bounds.push(length);
    return bounds;
  }
  for (let start = 0; start < length; ) {
    const lf = start + size - 1 < length ? nextLf(start + size - 1) : -1;
    start = lf === -1 ? length : lf + 1;
    bounds.push(start);
  }
  return bounds;
}

/**
 * Where each block starts and the number of its first line, so a search can read a few blocks of a
 * large text and number their lines without counting from the start: [start₀, line₀, start₁,
 * line₁, …, length] (Float64: offsets may pass 2^31).
 */
export function blockLines(data: Uint8Array, bounds: readonly number[]): Float64Array {
  const blocks = bounds.length - 1;
  const out = new Float64Array(2 * blocks + 1);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let line = 1;
  for (let b = 0; b < blocks; b++) {
    const start = bounds[b] as number;
    const from = b === 0 ? 0 : (bounds[b - 1] as number);
    for (let nl = bytes.indexOf(10, from); nl !== -1 && nl < start; nl = bytes.indexOf(10, nl + 1)) line++;
    out[2 * b] = start;
    out[2 * b + 1] = line;
  }
  out[2 * blocks] = bounds[blocks] as number;
  return out;
}
