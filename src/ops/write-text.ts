// write_text: replaces a file's whole text the way an editor saves it. A text file that has line
// endings keeps them (LF text written over a CRLF file stays CRLF) and keeps its UTF-8 BOM; a new,
// empty, single-line or binary file takes the text exactly as given. Parents are created.
import { z } from "zod";
import { AfsError, isAfsError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import { RETRY, retryOnConflict, spentText, type Try } from "../core/retry.js";
import { decodeText, shapeOf, withShape } from "../core/text.js";
import type { MutationResult, Volume } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";

export const writeTextArgs = z.strictObject({
  path: pathArg,
  content: z.string().describe("The complete new text of the file; it takes the file's line endings and BOM."),
});
export type WriteTextArgs = z.infer<typeof writeTextArgs>;

/** The text to store over `old`: the given text in the old file's shape, when it has one. */
export function inShapeOf(old: string | null, content: string): string {
  if (old === null) return content;
  const was = shapeOf(old);
  const given = shapeOf(content);
  const eol = old.includes("\n") ? was.eol : given.eol;
  return withShape(given.body, { bom: was.bom || given.bom, eol });
}

/**
 * `known` is the file's content as the caller just read it (null: nothing there), saving the first
 * read; the write still lands only over exactly that content, so a stale `known` costs a retry.
 */
export async function writeText(volume: Volume, args: WriteTextArgs, known?: Buffer | null): Promise<MutationResult> {
  const path = normalizePath(args.path);
  return retryOnConflict(
    async (attempt): Promise<Try<MutationResult>> => {
      const old =
        attempt === 0 && known !== undefined
          ? known
          : await volume.readFile(path).catch((e) => {
              if (isAfsError(e) && e.code === "NOT_FOUND") return null;
              throw e;
            });
      const text = inShapeOf(old === null ? null : decodeText(old), args.content);
      try {
        // The write lands only over exactly what was read (or where nothing was), so a writer that
        // got in between is never overwritten with a shape computed from stale text.
        // A second miss in a row is a name that exists but cannot be read as a file (a dangling
        // symlink): write through it, as an editor would.
        const expectSha256 = old !== null ? sha256(old) : attempt === 0 ? null : undefined;
        return await volume.writeFile(path, Buffer.from(text, "utf8"), { op: "write", expectSha256 });
      } catch (e) {
        if (isAfsError(e) && (e.code === "CONFLICT" || e.code === "ALREADY_EXISTS" || e.code === "NOT_FOUND")) {
          return RETRY;
        }
        throw e;
      }
    },
    {
      giveUp: (spent) =>
        new AfsError(
          "CONFLICT",
          `${path} kept changing while it was being written (${spentText(spent)}); write it again`,
          {
            path,
          },
        ),
    },
  );
}
