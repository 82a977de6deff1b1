// rename: moves a file, symlink or directory to a new path (creating the target's parents).
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import { isRoot, isWithin } from "../core/paths.js";
import type { MutationResult, Volume } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";

export const renameArgs = z.strictObject({
  path: pathArg.describe("What to move: a file, symlink or directory."),
  new_path: z
    .string()
    .describe("Where to move it, absolute inside the volume. Missing parent directories are created."),
  overwrite: z
    .boolean()
    .optional()
    .describe("Replace an existing file or symlink at new_path. An existing directory is never replaced."),
});
export type RenameArgs = z.infer<typeof renameArgs>;

export async function rename(volume: Volume, args: RenameArgs): Promise<MutationResult> {
  const from = normalizePath(args.path);
  const to = normalizePath(args.new_path);
  if (isRoot(from) || isRoot(to)) throw new AfsError("INVALID_ARGUMENT", 'cannot rename the root "/"', { path: from });
  if (to !== from && isWithin(to, from)) {
    throw new AfsError("INVALID_ARGUMENT", `cannot move ${from} into itself (${to})`, { path: from, new_path: to });
  }
  return volume.rename(from, to, { overwrite: args.overwrite === true });
}
