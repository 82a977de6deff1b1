// lines: a numbered slice of a text file, keeping the file's own line endings. A small file is read
// whole; a larger one is streamed (line-window.ts), so a window of a file of any size costs bounded memory.
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import { decodeText } from "../core/text.js";
import { type OpenFile, type Volume, withOpenFile } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";
import { lineWindow } from "./line-window.js";

export const linesArgs = z.strictObject({
  path: pathArg,
  start: z
    .number()
    .int()
    .describe("First line to return, 1-based. Past the end of the file gives empty content, not an error."),
  end: z
    .number()
    .int()
    .min(-1)
    .optional()
    .describe("Last line to return, inclusive; -1 (default) means the end of the file. Clamped to the file's length."),
});
export type LinesArgs = z.infer<typeof linesArgs>;

export interface LinesResult {
  path: string;
  /** The first line returned (as asked). */
  start: number;
  /** The last line returned, after clamping; start - 1 when nothing was returned. */
  end: number;
  total_lines: number;
  content: string;
  /** The whole file's sha256, to pass as expected_sha256 to an edit. */
  sha256: Hash;
  /** Set when the range held no lines, saying why. */
  note?: string;
}

// A line with its own ending: "\n", "\r\n", or none for an unterminated last line.
const LINE = /[^\n]*\n|[^\n]+$/g;

/** A text's lines, each with its own line ending (the last may have none). */
export const linesOf = (text: string): string[] => text.match(LINE) ?? [];

/**
 * Files up to this size are read whole and split, the quickest way for the small files agents mostly
 * read; beyond it streaming wins (measured: equal at 64 KiB, 2× faster at 256 KiB, 3× at 1 MiB).
 */
export const SMALL_FILE_BYTES = 128 * 1024;

export interface LinesOptions {
  /** Largest content returned: a window of more bytes is QUOTA_EXCEEDED, found without holding it. */
  maxContentBytes?: number;
  /** A face's own pointer, appended to that error's advice (the CLI names `afs fs cat`). */
  hint?: string;
}

/** The path and the end (-1: the end of the file) of a valid request; INVALID_ARGUMENT otherwise. */
function checkRange(args: LinesArgs): { path: string; requestedEnd: number } {
  const path = normalizePath(args.path);
  if (args.start < 1) {
    throw new AfsError("INVALID_ARGUMENT", `start must be 1 or more (lines are numbered from 1); got ${args.start}`, {
      path,
    });
  }
  const requestedEnd = args.end ?? -1;
  if (requestedEnd !== -1 && requestedEnd < args.start) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `end (${requestedEnd}) must be -1 (end of file) or at least start (${args.start})`,
      {
        path,
      },
    );
  }
  return { path, requestedEnd };
}

export async function lines(volume: Volume, args: LinesArgs, options: LinesOptions = {}): Promise<LinesResult> {
  const { path, requestedEnd } = checkRange(args);
  const start = args.start;
  const found = await withOpenFile(volume, path, (file) =>
    file.size <= SMALL_FILE_BYTES
      ? wholeWindow(file, path, start, requestedEnd)
      : streamedWindow(file, path, start, requestedEnd, options),
  );
  const { total, content, sha256: hash } = found;
  if (start > total) {
    return {
      path,
      start,
      end: start - 1,
      total_lines: total,
      content: "",
      sha256: hash,
      note: `start ${start} is past the end of the file, which has ${total} line${total === 1 ? "" : "s"}`,
    };
  }
  const end = requestedEnd === -1 ? total : Math.min(requestedEnd, total);
  if (options.maxContentBytes !== undefined)
    checkContent(path, start, end, Buffer.byteLength(content), options.maxContentBytes, options.hint);
  return { path, start, end, total_lines: total, content, sha256: hash };
}

/**
 * The same window handed to `emit` piece by piece as the file is read, never held whole: for a
 * reader that prints it (the CLI). Nothing is emitted for a window past the end of the file.
 */
export async function streamLines(
  volume: Volume,
  args: LinesArgs,
  emit: (bytes: Buffer) => Promise<void>,
): Promise<void> {
  const { path, requestedEnd } = checkRange(args);
  await withOpenFile(volume, path, async (file) => {
    if (file.size <= SMALL_FILE_BYTES) {
      const { content } = await wholeWindow(file, path, args.start, requestedEnd);
      if (content !== "") await emit(Buffer.from(content, "utf8"));
      return;
    }
    const end = requestedEnd === -1 ? Number.POSITIVE_INFINITY : requestedEnd;
    const w = await lineWindow(file, { start: args.start, end, toEnd: false, emit });
    if (w.binary) throw binaryFile(path);
  });
}

interface Found {
  total: number;
  content: string;
  sha256: Hash;
}

const binaryFile = (path: string): AfsError =>
  new AfsError(
    "INVALID_ARGUMENT",
    `${path} is a binary file (not UTF-8 text); read it with encoding "base64" instead`,
    {
      path,
    },
  );

async function wholeWindow(file: OpenFile, path: string, start: number, requestedEnd: number): Promise<Found> {
  const data = await file.read(0, file.size);
  const text = decodeText(data);
  if (text === null) throw binaryFile(path);
  const all = linesOf(text.startsWith("\uFEFF") ? text.slice(1) : text);
  const end = requestedEnd === -1 ? all.length : requestedEnd;
  return { total: all.length, content: all.slice(start - 1, end).join(""), sha256: file.sha256 ?? sha256(data) };
}

/**
 * Line counts of large texts already scanned to the end, by content hash (so never stale): an agent
 * paging through a large file then reads each window only as far as its end, not the whole file
 * again for `total_lines` (a window at the start of a 600 MiB file: ~1.4 s, then ~0.1 s).
 * Process-wide on purpose: a fact about content, the same for every engine and caller.
 */
const knownTotals = new WeightedLru<Hash, number>(16_384, () => 1);

async function streamedWindow(
  file: OpenFile,
  path: string,
  start: number,
  requestedEnd: number,
  options: LinesOptions,
): Promise<Found> {
  const end = requestedEnd === -1 ? Number.POSITIVE_INFINITY : requestedEnd;
  const known = file.sha256 === undefined ? undefined : knownTotals.get(file.sha256);
  // Only a text is counted (a scan to the end checked all of it as UTF-8), so a window of it stops early.
  const toEnd = known === undefined || end === Number.POSITIVE_INFINITY;
  const w = await lineWindow(file, { start, end, toEnd, maxBytes: options.maxContentBytes });
  if (w.binary) throw binaryFile(path);
  // A scan to the end always counts the lines and knows the hash (the volume's, or hashed on the way).
  const total = (toEnd ? w.total : known) as number;
  if (toEnd && file.sha256 !== undefined) knownTotals.set(file.sha256, total);
  if (w.content === null) {
    checkContent(path, start, Math.min(end, total), w.bytes, options.maxContentBytes ?? 0, options.hint);
  }
  return { total, content: w.content ?? "", sha256: (w.sha256 ?? file.sha256) as Hash };
}

function checkContent(path: string, start: number, end: number, bytes: number, max: number, hint?: string): void {
  if (bytes <= max) return;
  throw new AfsError(
    "QUOTA_EXCEEDED",
    `lines ${start}-${end} of ${path} come to ${bytes} bytes, more than the ${max} bytes one answer carries; ask for fewer lines${hint ? ` (${hint})` : ""}`,
    { path, size: bytes, limit: max },
  );
}
