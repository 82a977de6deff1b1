// The errors every Volume raises, one factory each, so a workspace and a directory refuse the same
// thing with the same code, message and details (volume paths only, never a host path).
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";

export const notFound = (p: string): AfsError => new AfsError("NOT_FOUND", `${p} does not exist`, { path: p });

/** create_exclusive (expectSha256: null) found something at the path. */
export const alreadyExists = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} already exists; create_exclusive never overwrites`, { path: p });

export const isDirectory = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is a directory; use list to see its contents`, { path: p });

export const notADirectory = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is not a directory`, { path: p });

/** mkdir where a file or symlink already is. */
export const notADirectoryThere = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} already exists and is not a directory`, { path: p });

/** An expectSha256 precondition that no longer holds. */
export const changed = (p: string, expected: Hash, actual: Hash): AfsError =>
  new AfsError(
    "CONFLICT",
    `${p} changed since you read it (expected sha256 ${expected}, now ${actual}); read it again and retry`,
    { path: p, expected_sha256: expected, actual_sha256: actual },
  );

export const nonEmptyDirectory = (p: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${p} is a non-empty directory; pass recursive to delete it with its contents`, {
    path: p,
  });

export const moveIntoItself = (from: string, to: string, details: { path: string; new_path: string }): AfsError =>
  new AfsError("INVALID_ARGUMENT", `cannot move ${from} into itself (${to})`, details);

/** A rename onto a directory. */
export const existingDirectory = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} is an existing directory; rename never replaces a directory`, { path: p });

/** A rename onto an existing entry without overwrite. */
export const targetExists = (p: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `${p} already exists; pass overwrite to replace it`, { path: p });

/** Symlinks that never end (a loop, or more hops than the volume follows). */
export const tooManySymlinks = (p: string): AfsError =>
  new AfsError("INVALID_PATH", `too many levels of symbolic links at ${p}`, { path: p });

/**
 * A symlink where the volume had resolved a plain entry: swapped in between the check and the open
 * (an O_NOFOLLOW open's ELOOP). Refused like a symlink that leads out, since it is not followed.
 */
export const symlinkSwapped = (p: string): AfsError =>
  new AfsError("PERMISSION_DENIED", `${p} changed into a symbolic link while it was opened; it is not followed`, {
    path: p,
  });
