// Caps on what one call may read, write or return, with defaults and AFS_MAX_* overrides. Every
// protocol edge enforces them through the functions here, so a cap means the same thing everywhere;
// messages name no protocol's tools, and a face may pass a `hint` naming its own.

import { AfsError } from "../core/errors.js";
import type { Env } from "../core/settings.js";

export interface Limits {
  /** Largest file a read returns whole; beyond it the caller reads ranges of lines. */
  maxReadBytes: number;
  /** Largest content (in bytes of the argument text) one write or edit call may carry. */
  maxWriteBytes: number;
  /** Most entries one list, glob, grep, query or diff result carries before `truncated: true`. */
  maxResults: number;
  /** Largest HTTP request body `afs serve` accepts. */
  maxHttpBodyBytes: number;
  /**
   * Largest whole text file a text-file protocol (ACP fs/read_text_file) serves. Such a protocol
   * reads by lines, not bytes, so this is what bounds the memory one request can pull in.
   */
  maxTextFileBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<Limits> = {
  maxReadBytes: MiB,
  maxWriteBytes: 10 * MiB,
  maxResults: 1000,
  maxHttpBodyBytes: 16 * MiB,
  maxTextFileBytes: 8 * MiB,
};

/** The environment variable that overrides each limit. */
export const LIMIT_ENV: Readonly<Record<keyof Limits, string>> = {
  maxReadBytes: "AFS_MAX_READ_BYTES",
  maxWriteBytes: "AFS_MAX_WRITE_BYTES",
  maxResults: "AFS_MAX_RESULTS",
  maxHttpBodyBytes: "AFS_MAX_HTTP_BODY_BYTES",
  maxTextFileBytes: "AFS_MAX_TEXT_FILE_BYTES",
};

/**
 * Defaults, then the settings (an engine's `settings.env`; none given: the defaults alone), then
 * explicit options; a malformed value is refused, not ignored.
 */
export function resolveLimits(options: Partial<Limits> = {}, env: Env = {}): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(LIMIT_ENV) as (keyof Limits)[]) {
    const raw = env[LIMIT_ENV[key]];
    if (raw !== undefined && raw !== "") limits[key] = positive(LIMIT_ENV[key], Number(raw));
    const given = options[key];
    if (given !== undefined) limits[key] = positive(key, given);
  }
  return limits;
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new AfsError("INVALID_ARGUMENT", `${name} must be a whole number of at least 1; got ${value}`);
  }
  return value;
}

const human = (n: number): string =>
  n >= MiB && n % MiB === 0 ? `${n / MiB} MiB` : n >= 1024 && n % 1024 === 0 ? `${n / 1024} KiB` : `${n} bytes`;

// A face's own pointer (its tool or method names), appended after the neutral advice.
const withHint = (advice: string, hint: string | undefined): string =>
  hint === undefined ? advice : `${advice} (${hint})`;

/** A whole-file read of `size` bytes; too big is QUOTA_EXCEEDED pointing at ranged reads. */
export function checkWholeRead(limits: Limits, path: string, size: number, hint?: string): void {
  if (size <= limits.maxReadBytes) return;
  throw new AfsError(
    "QUOTA_EXCEEDED",
    `${path} is ${size} bytes, more than the ${human(limits.maxReadBytes)} returned whole; ${withHint("read a range of lines instead", hint)}`,
    { path, size, limit: limits.maxReadBytes },
  );
}

/** A ranged read that still came out too big. */
export function checkRangeRead(limits: Limits, path: string, bytes: number, hint?: string): void {
  if (bytes <= limits.maxReadBytes) return;
  throw new AfsError(
    "QUOTA_EXCEEDED",
    `those lines of ${path} come to ${bytes} bytes, more than the ${human(limits.maxReadBytes)} limit; ${withHint("ask for fewer lines", hint)}`,
    { path, size: bytes, limit: limits.maxReadBytes },
  );
}

/** A whole text file served by a text-file protocol; too big is QUOTA_EXCEEDED naming the cap's variable. */
export function checkTextFile(limits: Limits, path: string, size: number, hint?: string): void {
  if (size <= limits.maxTextFileBytes) return;
  throw new AfsError(
    "QUOTA_EXCEEDED",
    `${path} is ${size} bytes, more than the ${human(limits.maxTextFileBytes)} served as one text file (${LIMIT_ENV.maxTextFileBytes}); ${withHint("read a range of lines instead, or raise the limit", hint)}`,
    { path, size, limit: limits.maxTextFileBytes },
  );
}

// Argument names that carry file content into a write, at any depth (patches[].new too).
const CONTENT_KEYS = new Set(["content", "new"]);

/** Sum of the content-carrying string arguments of a call; over the cap is QUOTA_EXCEEDED. */
export function checkWriteArgs(limits: Limits, args: unknown, hint?: string): void {
  const bytes = contentBytes(args);
  if (bytes <= limits.maxWriteBytes) return;
  throw new AfsError(
    "QUOTA_EXCEEDED",
    `the content is ${bytes} bytes, more than the ${human(limits.maxWriteBytes)} one call may write; ${withHint("split it into smaller writes", hint)}`,
    { size: bytes, limit: limits.maxWriteBytes },
  );
}

function contentBytes(value: unknown, key?: string): number {
  if (typeof value === "string") return key !== undefined && CONTENT_KEYS.has(key) ? Buffer.byteLength(value) : 0;
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + contentBytes(v, key), 0);
  if (value !== null && typeof value === "object") {
    let sum = 0;
    for (const [k, v] of Object.entries(value)) sum += contentBytes(v, k);
    return sum;
  }
  return 0;
}

/** The first maxResults items, and whether any were left off. */
export function capResults<T>(limits: Limits, items: readonly T[]): { items: T[]; truncated: boolean } {
  return items.length > limits.maxResults
    ? { items: items.slice(0, limits.maxResults), truncated: true }
    : { items: [...items], truncated: false };
}
