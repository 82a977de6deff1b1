// A file on disk as an OpenFile: positioned reads on one open descriptor, so a window or a range of
// a file of any size costs only the bytes asked for, and every read sees the file that was opened.
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { Hash } from "../../core/hash.js";
import type { OpenFile } from "../volume.js";

/** Bytes per streamed piece: large enough that a scan is a few syscalls per MiB, small enough to hold two. */
export const PIECE_BYTES = 4 * 1024 * 1024;

/** Fills up to `length` bytes from `offset`, stopping early at the end of the file. */
export async function readAt(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(Math.max(0, length));
  let got = 0;
  while (got < out.length) {
    const { bytesRead } = await fh.read(out, got, out.length - got, offset + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === out.length ? out : out.subarray(0, got);
}

/**
 * `fh` (already checked to be a regular file of `size` bytes) as an OpenFile that closes it.
 * `remembered` wraps the hashing of the whole file (a cache keyed by the file's version); default: hash it.
 */
export function handleFile(
  fh: FileHandle,
  size: number,
  mtime?: number,
  remembered: (compute: () => Promise<Hash>) => Promise<Hash> = (compute) => compute(),
): OpenFile {
  async function* stream(): AsyncIterable<Buffer> {
    for (let at = 0; at < size; ) {
      const piece = await readAt(fh, at, Math.min(PIECE_BYTES, size - at));
      if (piece.length === 0) return; // truncated by another program since it was opened
      yield piece;
      at += piece.length;
    }
  }
  return {
    size,
    mtime,
    hash: () =>
      remembered(async () => {
        const h = createHash("sha256");
        for await (const piece of stream()) h.update(piece);
        return h.digest("hex");
      }),
    read: (offset, length) => readAt(fh, offset, Math.min(length, Math.max(0, size - offset))),
    stream,
    close: () => fh.close(),
  };
}
