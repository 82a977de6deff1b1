// errno errors from the host filesystem as AfsErrors that name the volume path (never the host
// path): the one errno table of every directory surface (a volume, the broker's roots, ACP).
import { AfsError, type ErrorCode, toAfsError } from "../../core/errors.js";
import { notFound, symlinkSwapped } from "../errors.js";

/** Per-call meanings for errno codes, e.g. ENOTDIR on readdir means "not a directory". */
export type ErrnoOverrides = Record<string, [ErrorCode, string]>;

// errno codes toAfsError leaves as IO_ERROR but that mean something specific here.
const EXTRA_CODES: ErrnoOverrides = {
  ENAMETOOLONG: ["INVALID_PATH", "name too long"],
  EINVAL: ["INVALID_ARGUMENT", "invalid argument"],
  ENOSPC: ["QUOTA_EXCEEDED", "no space left on the device"],
  EDQUOT: ["QUOTA_EXCEEDED", "disk quota exceeded"],
  EROFS: ["PERMISSION_DENIED", "read-only file system"],
};

/**
 * An errno error as an AfsError naming the volume path (never the host path). ELOOP from any
 * operation on a path the confinement already resolved means a symlink was swapped in meanwhile
 * (O_NOFOLLOW refused it): PERMISSION_DENIED, like a symlink leading out. A symlink loop met while
 * resolving is INVALID_PATH, raised by the confinement itself (tooManySymlinks).
 */
export function fsError(e: unknown, p: string, overrides: ErrnoOverrides = {}): AfsError {
  if (e instanceof AfsError) return e;
  const code = (e as NodeJS.ErrnoException)?.code ?? "";
  const special = overrides[code];
  if (special) return new AfsError(special[0], special[1], { path: p });
  if (code === "ELOOP") return symlinkSwapped(p);
  const extra = EXTRA_CODES[code];
  if (extra) return new AfsError(extra[0], `${p}: ${extra[1]}`, { path: p });
  if (code === "ENOENT") return notFound(p);
  const mapped = toAfsError(Object.assign(new Error(String(e)), { code, path: p }));
  return new AfsError(mapped.code, mapped.message, { path: p });
}
