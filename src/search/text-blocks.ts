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
