// files/read and files/write: byte ranges out (utf-8 never split mid-character, binary only as
// base64, the whole file's SHA-256 alongside) and whole or chunked writes in, always landing
// atomically through Volume.writeFile with the optional expectedSha256 precondition.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { extname, join } from "node:path";
import type { z } from "zod";
import { AfsError } from "../../core/errors.js";
import { segments } from "../../core/paths.js";
import { wholeCharacters } from "../../core/text.js";
import { withOpenFile } from "../../volume/volume.js";
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

// SHA-256 of whole files, keyed by identity and change times, so a chunked read hashes once.
const shaCache = new Map<string, string>();
const SHA_CACHE_SIZE = 256;

interface Range {
  size: number;
  sha256: string;
  bytes: Buffer;
}

/** Reads [offset, offset+length) of a file, its size and whole-file hash. */
async function readRange(t: Target, offset: number, length: number): Promise<Range> {
  const root = t.root;
  if (!root.confinement) {
    // A workspace root: only the range is read; the store knows the whole file's hash.
    const st = await root.volume.stat(t.path);
    if (!st) throw new AfsError("NOT_FOUND", `${t.path} does not exist`, { path: t.path });
    if (st.kind !== "file") throw notAFile(t.path);
    return withOpenFile(root.volume, t.path, async (file) => {
      const bytes = await file.read(offset, length);
      const sha256 = file.sha256 ?? (await hashStream(file.stream()));
      return { size: file.size, sha256, bytes };
    });
  }
  const host = join(await root.confinement.root(), ...segments(t.path));
  // O_NOFOLLOW: a component swapped for a symlink since the check is refused, not followed.
  const fh = await fsp.open(host, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((e) => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR")
      throw new AfsError("NOT_FOUND", `${t.path} does not exist`, { path: t.path });
    if (code === "ELOOP")
      throw new AfsError("PERMISSION_DENIED", `${t.path} changed into a symbolic link; try again`, { path: t.path });
    throw new AfsError("IO_ERROR", `${t.path} could not be opened (${code ?? "error"})`, { path: t.path });
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notAFile(t.path);
    const id = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    let sha256 = shaCache.get(id);
    if (!sha256) {
      const hash = createHash("sha256");
      const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
      for (let pos = 0; pos < st.size; ) {
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        hash.update(buf.subarray(0, bytesRead));
        pos += bytesRead;
      }
      sha256 = hash.digest("hex");
      if (shaCache.size >= SHA_CACHE_SIZE) shaCache.delete(shaCache.keys().next().value as string);
      shaCache.set(id, sha256);
    }
    const want = Math.max(0, Math.min(length, st.size - offset));
    const bytes = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await fh.read(bytes, got, want - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { size: st.size, sha256, bytes: bytes.subarray(0, got) };
  } finally {
    await fh.close();
  }
}

async function hashStream(pieces: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash("sha256");
  for await (const piece of pieces) hash.update(piece);
  return hash.digest("hex");
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
  const result = await volume.writeFile(real.path, whole, { op: "write", ...(expectSha256 ? { expectSha256 } : {}) });
  return { path: display, size: result.size, sha256: result.sha256, done: true };
}
