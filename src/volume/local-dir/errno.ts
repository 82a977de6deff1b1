// errno errors from the host filesystem as AfsErrors that name the volume path (never the host
// path), plus the errors the directory volume raises itself.
import { AfsError, type ErrorCode, toAfsError } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";

/** Per-call meanings for errno codes, e.g. ENOTDIR on readdir means "not a directory". */
export type ErrnoOverrides = Record<string, [ErrorCode, string]>;

// errno codes toAfsError leaves as IO_ERROR but that mean something specific here.
const EXTRA_CODES: ErrnoOverrides = {
  ELOOP: ["INVALID_PATH", "too many levels of symbolic links (or a symlink appeared mid-operation)"],
  ENAMETOOLONG: ["INVALID_PATH", "name too long"],
  EINVAL: ["INVALID_ARGUMENT", "invalid argument"],
  ENOSPC: ["QUOTA_EXCEEDED", "no space left on the device"],
  EDQUOT: ["QUOTA_EXCEEDED", "disk quota exceeded"],
  EROFS: ["PERMISSION_DENIED", "read-only file system"],
};

/** An errno error as an AfsError naming the volume path (never the host path). */
export function fsError(e: unknown, p: string, overrides: ErrnoOverrides = {}): AfsError {
  if (e instanceof AfsError) return e;
  const code = (e as NodeJS.ErrnoException)?.code ?? "";
  const special = overrides[code];
  if (special) return new AfsError(special[0], special[1], { path: p });
  const extra = EXTRA_CODES[code];
  if (extra) return new AfsError(extra[0], `${p}: ${extra[1]}`, { path: p });
  if (code === "ENOENT") return notFound(p);
  const mapped = toAfsError(Object.assign(new Error(String(e)), { code, path: p }));
  return new AfsError(mapped.code, mapped.message, { path: p });
}

export const notFound = (p: string): AfsError => new AfsError("NOT_FOUND", `${p} does not exist`, { path: p });
export const alreadyExists = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} already exists; create_exclusive never overwrites`, { path: p });
export const isDirectory = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is a directory; use list to see its contents`, { path: p });
export const changed = (p: string, expected: Hash, actual: Hash): AfsError =>
  new AfsError(
    "CONFLICT",
    `${p} changed since you read it (expected sha256 ${expected}, now ${actual}); read it again and retry`,
    {
      path: p,
      expected_sha256: expected,
      actual_sha256: actual,
    },
  );
