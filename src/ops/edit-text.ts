// Read-modify-write for text edits: decode the file, edit its "\n"-normalized body, put the BOM and
// line endings back, and write under the volume's atomic precondition, retrying when another writer
// got in between (unless the caller pinned expected_sha256, which turns a race into CONFLICT).
import { AfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { RETRY, retryIfConflict, retryOnConflict, spentText } from "../core/retry.js";
import { decodeText, shapeOf, type TextShape, withShape } from "../core/text.js";
import type { MutationResult, Volume } from "../volume/volume.js";

export interface TextFile {
  path: string;
  data: Buffer;
  sha256: Hash;
  /** The decoded text exactly as stored (BOM and line endings included). */
  text: string;
  shape: TextShape;
}

/** Reads a file as text; a binary file is INVALID_ARGUMENT, a directory INVALID_ARGUMENT, nothing NOT_FOUND. */
export async function readText(
  volume: Volume,
  path: string,
  whatToDo = 'text edits cannot change it; use write with encoding "base64" instead',
): Promise<TextFile> {
  const data = await volume.readFile(path);
  const text = decodeText(data);
  if (text === null) {
    throw new AfsError("INVALID_ARGUMENT", `${path} is a binary file (not UTF-8 text); ${whatToDo}`, { path });
  }
  return { path, data, sha256: sha256(data), text, shape: shapeOf(text) };
}

export function conflict(path: string, expected: Hash, actual: Hash): AfsError {
  return new AfsError(
    "CONFLICT",
    `${path}: file changed since you read it (now sha256 ${actual}); read it again and retry`,
    { path, expected_sha256: expected, actual_sha256: actual },
  );
}

/** Throws CONFLICT when the caller pinned a hash the file no longer has. */
export function checkExpected(file: TextFile, expected: Hash | undefined): void {
  if (expected !== undefined && file.sha256 !== expected.toLowerCase()) {
    throw conflict(file.path, expected.toLowerCase(), file.sha256);
  }
}

/**
 * Applies `edit` to the file's normalized body and writes the result atomically. `edit` must be
 * pure: it runs again on the fresh text after a lost race.
 */
export async function editText<X extends object>(
  volume: Volume,
  path: string,
  op: string,
  expected: Hash | undefined,
  edit: (body: string, file: TextFile) => { body: string; extra: X },
): Promise<MutationResult & X> {
  // Someone else wrote in between: redo the edit on the fresh text (core/retry.ts's pause and
  // budget); a pinned expected_sha256 makes that race the caller's CONFLICT instead.
  return retryOnConflict(
    async () => {
      const file = await readText(volume, path);
      checkExpected(file, expected);
      const { body, extra } = edit(file.shape.body, file);
      const out = Buffer.from(withShape(body, file.shape), "utf8");
      const write = volume.writeFile(path, out, { op, expectSha256: file.sha256 });
      const result = expected === undefined ? await retryIfConflict(write) : await write;
      return result === RETRY ? RETRY : { ...result, ...extra };
    },
    {
      giveUp: (spent) =>
        new AfsError(
          "CONFLICT",
          `${path} kept changing while ${op} was editing it (${spentText(spent)}); read it again and retry`,
          { path },
        ),
    },
  );
}
