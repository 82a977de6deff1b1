// A window of lines from a file of any size, found by streaming its bytes: newlines are counted with
// Buffer.indexOf piece by piece and only the window's bytes are kept and decoded, so memory stays a
// few pieces however large the file. Answers are those of splitting the whole decoded text.
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { Hash } from "../core/hash.js";
import { SNIFF_BYTES, wholeCharacters } from "../core/text.js";
import type { OpenFile } from "../volume/volume.js";

const NL = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface WindowRequest {
  /** First line, 1-based. */
  start: number;
  /** Last line, inclusive; Infinity for the end of the file; start - 1 for no lines. */
  end: number;
  /** Scan to the end of the file (for the total and the hash) rather than stopping after the window. */
  toEnd: boolean;
  /** Keep at most this many bytes of window; beyond it only their count is kept (`content` null). */
  maxBytes?: number;
  /**
   * Hand the window's bytes here as they are found instead of keeping them (`content` null), each
   * piece checked as UTF-8 first: a window of any size in the memory of one piece. A binary file
   * (a NUL in its first 8 KiB) is found before anything is handed over; invalid UTF-8 further on
   * only where the scan reaches it, after the pieces before it.
   */
  emit?: (bytes: Buffer) => Promise<void>;
}

export type LineWindow =
  | { binary: true }
  | {
      binary: false;
      /** The window's text (BOM left out), or null when it came to more than maxBytes. */
      content: string | null;
      /** Bytes of the window, counted even when not kept. */
      bytes: number;
      /** Lines in the file; only after a scan to the end. */
      total?: number;
      /** The file's SHA-256: the volume's, or hashed on a scan to the end. */
      sha256?: Hash;
    };

/**
 * Streams `file` and returns lines start..end, each with its own ending ("\n", "\r\n", or none for
 * an unterminated last line). Binary like decodeText: a NUL in the first 8 KiB, or invalid UTF-8 in
 * the bytes scanned (all of them with toEnd; otherwise up to the window's end).
 */
export async function lineWindow(file: OpenFile, want: WindowRequest): Promise<LineWindow> {
  // The BOM is read apart so a scan need not look for it across the first pieces.
  const head = await file.read(0, want.emit ? SNIFF_BYTES : BOM.length);
  if (want.emit && head.includes(0)) return { binary: true };
  const bodyStart = head.subarray(0, BOM.length).equals(BOM) ? BOM.length : 0;
  const hash = want.toEnd && file.sha256 === undefined ? createHash("sha256") : null;
  const utf8 = new Utf8Check();
  const max = want.maxBytes ?? Number.POSITIVE_INFINITY;
  const kept: Buffer[] = [];
  let bytes = 0;
  let line = 1; // the line the scan is in
  let winStart = want.start === 1 ? bodyStart : -1; // absolute offsets; -1 = not reached
  let winEnd = -1;
  let at = 0; // offset of the current piece
  let lastByte = -1;

  for await (const piece of file.stream()) {
    hash?.update(piece);
    if (at < SNIFF_BYTES && piece.subarray(0, SNIFF_BYTES - at).includes(0)) return { binary: true };
    if (!utf8.push(piece)) return { binary: true };
    const pieceEnd = at + piece.length;
    let from = 0;
    // Newlines matter until the window is found and closed, or all of them for the total.
    while (want.toEnd || winStart < 0 || (winEnd < 0 && want.end !== Number.POSITIVE_INFINITY)) {
      const nl = piece.indexOf(NL, from);
      if (nl < 0) break;
      // Line `line` ends just after this newline.
      if (line === want.end) winEnd = at + nl + 1;
      line++;
      if (line === want.start) winStart = at + nl + 1;
      from = nl + 1;
    }
    // The part of this piece inside the window.
    if (winStart >= 0 && winStart < pieceEnd && want.end >= want.start) {
      const lo = Math.max(winStart, at) - at;
      const hi = (winEnd >= 0 ? Math.min(winEnd, pieceEnd) : pieceEnd) - at;
      if (hi > lo) {
        bytes += hi - lo;
        // A copy: the piece may be reused, and a writer may hold what it was handed.
        if (want.emit) await want.emit(Buffer.from(piece.subarray(lo, hi)));
        else if (bytes <= max) kept.push(Buffer.from(piece.subarray(lo, hi)));
        else kept.length = 0;
      }
    }
    if (piece.length > 0) lastByte = piece[piece.length - 1] as number;
    at = pieceEnd;
    if (winEnd >= 0 && !want.toEnd) break;
    // Past the window's end when it is empty or started beyond a piece already left behind.
    if (!want.toEnd && want.end < want.start && at > 0) break;
  }
  if (want.toEnd && !utf8.end()) return { binary: true };
  // An unterminated last line is a line too.
  const unterminated = at > bodyStart && lastByte !== NL;
  const total = want.toEnd ? line - 1 + (unterminated ? 1 : 0) : undefined;
  const sha256 = file.sha256 ?? hash?.digest("hex");
  const content = want.emit || bytes > max ? null : Buffer.concat(kept, bytes).toString("utf8");
  return {
    binary: false,
    content,
    bytes,
    ...(total === undefined ? {} : { total }),
    ...(sha256 === undefined ? {} : { sha256 }),
  };
}

/** Checks a byte stream is UTF-8 piece by piece; a character split between pieces is carried over. */
class Utf8Check {
  private carry: Buffer = Buffer.alloc(0);

  push(piece: Buffer): boolean {
    // Joining copies the piece, but only when a character straddles the boundary.
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, piece]) : piece;
    const whole = wholeCharacters(data);
    if (!isUtf8(data.subarray(0, whole))) return false;
    this.carry = Buffer.from(data.subarray(whole));
    return true;
  }

  /** True when nothing is left over (a character cut off at the end is invalid). */
  end(): boolean {
    return this.carry.length === 0;
  }
}
