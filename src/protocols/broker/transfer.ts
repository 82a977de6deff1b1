// files/read and files/write: byte ranges out (utf-8 never split mid-character, binary only as
// base64, the whole file's SHA-256 alongside) and whole or chunked writes in, always landing
// atomically through Volume.writeFile with the optional expectedSha256 precondition.
import { extname } from "node:path";
import type { z } from "zod";
import { AfsError, isAfsError } from "../../core/errors.js";
import { wholeCharacters } from "../../core/text.js";
import type { BrokerContext } from "./context.js";
import type { Target } from "./paths.js";
import { keyOf } from "./paths.js";
import type { readParams, readResult, writeParams, writeResult } from "./wire.js";

type ReadResult = z.infer<typeof readResult>;

const MIME: Record<string, string> = {
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".json": "application/json",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".ts": "text/x-typescript",
  ".py": "text/x-python",
  ".html": "text/html",
  ".css": "text/css",
  ".csv": "text/csv",
  ".xml": "application/xml",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
  ".sh": "text/x-shellscript",
  ".go": "text/x-go",
  ".rs": "text/x-rust",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".bin": "application/octet-stream",
};
const mimeOf = (path: string, text: boolean): string =>
  MIME[extname(path).toLowerCase()] ?? (text ? "text/plain" : "application/octet-stream");

interface Range {
  size: number;
  sha256: string;
  bytes: Buffer;
}

/**
 * Reads [offset, offset+length) of a file, its size and whole-file hash, through the root's volume:
 * a workspace knows the hash; a directory hashes the file once per version (its cache) and refuses
 * a symlink swapped in since the path was confined (PERMISSION_DENIED, from its errno table).
 */
async function readRange(t: Target, offset: number, length: number): Promise<Range> {
  const file = await t.root.volume.openFile(t.path).catch(async (e: unknown) => {
    // Worded for files/* only when it is a directory (asked, not read from the message); any other
    // refusal (EINVAL from the disk, …) stays as the volume said it.
    const directory =
      isAfsError(e) && e.code === "INVALID_ARGUMENT" && (await t.root.volume.stat(t.path))?.kind === "dir";
    throw directory ? notAFile(t.path) : e;
  });
  try {
    const bytes = await file.read(offset, length);
    return { size: file.size, sha256: await file.hash(), bytes };
  } finally {
    await file.close();
  }
}

const notAFile = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is not a regular file; list a directory with files/list`, { path: p });

const decoder = new TextDecoder("utf-8", { fatal: true });

export async function read(ctx: BrokerContext, p: z.infer<typeof readParams>): Promise<ReadResult> {
  const { target, real } = await ctx.authorize(p.path, "read");
  const encoding = p.encoding ?? "utf-8";
  const offset = p.offset ?? 0;
  const length = Math.min(p.length ?? ctx.chunkBytes, ctx.chunkBytes);
  const range = await readRange(real, offset, length);
  let bytes = range.bytes;
  const end = offset + bytes.length;
  let content: string;
  if (encoding === "base64") content = bytes.toString("base64");
  else {
    const binary = (): AfsError =>
      new AfsError(
        "INVALID_ARGUMENT",
        `${ctx.display(target)} is binary at this range (a NUL byte or invalid UTF-8, or the offset splits a character); read it with encoding base64`,
        { path: ctx.display(target) },
      );
    if (bytes.includes(0)) throw binary();
    if (end < range.size) bytes = bytes.subarray(0, wholeCharacters(bytes));
    if (bytes.length === 0 && range.bytes.length > 0) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `no whole UTF-8 character fits in ${length} bytes at offset ${offset}; ask for more bytes or use encoding base64`,
        { path: ctx.display(target) },
      );
    }
    try {
      content = decoder.decode(bytes);
    } catch {
      throw binary();
    }
  }
  ctx.note.bytes = bytes.length;
  return {
    content,
    size: range.size,
    mimeType: mimeOf(real.path, encoding === "utf-8"),
    encoding,
    offset,
    length: bytes.length,
    eof: offset + bytes.length >= range.size,
    sha256: range.sha256,
  };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeContent(content: string, encoding: "utf-8" | "base64"): Buffer {
  if (encoding === "utf-8") return Buffer.from(content, "utf8");
  const compact = content.replace(/\s+/g, "");
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    throw new AfsError("INVALID_ARGUMENT", "content is not valid base64");
  }
  return Buffer.from(compact, "base64");
}

export async function write(ctx: BrokerContext, p: z.infer<typeof writeParams>): Promise<z.infer<typeof writeResult>> {
  const { target, real } = await ctx.authorize(p.path, "write");
  const data = decodeContent(p.content, p.encoding ?? "utf-8");
  ctx.note.bytes = data.length;
  if (data.length > ctx.chunkBytes) {
    throw new AfsError(
      "QUOTA_EXCEEDED",
      `one write carries at most ${ctx.chunkBytes} bytes; send larger files in chunks with offset and final`,
      { size: data.length, limit: ctx.chunkBytes },
    );
  }
  const volume = real.root.volume;
  const display = ctx.display(target);
  const starting = p.offset === undefined || p.offset === 0;
  if (starting && p.create === false && !(await volume.stat(real.path))) {
    throw new AfsError("NOT_FOUND", `${display} does not exist and create is false`, { path: display });
  }
  let whole: Uint8Array = data;
  if (p.offset !== undefined) {
    const staged = await ctx.staging.append(ctx.server, keyOf(real), p.offset, data);
    if (p.final !== true) return { path: display, size: staged, sha256: null, done: false };
    whole = await ctx.staging.take(ctx.server, keyOf(real));
  }
  ctx.signal.throwIfAborted();
  const expectSha256 = p.expectedSha256?.toLowerCase();
  const writer = await real.root.writerFor(ctx.server);
  const result = await writer.writeFile(real.path, whole, { op: "write", ...(expectSha256 ? { expectSha256 } : {}) });
  return { path: display, size: result.size, sha256: result.sha256, done: true };
}
