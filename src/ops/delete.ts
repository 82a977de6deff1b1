// delete: removes a file, a symlink (not its target) or a directory.
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import { isRoot } from "../core/paths.js";
import type { MutationResult, Volume } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";

export const deleteArgs = z.strictObject({
  path: pathArg,
  recursive: z
    .boolean()
    .optional()
    .describe("Needed to delete a directory that is not empty, together with everything in it."),
});
export type DeleteArgs = z.infer<typeof deleteArgs>;

export async function remove(volume: Volume, args: DeleteArgs): Promise<MutationResult> {
  const path = normalizePath(args.path);
  if (isRoot(path)) {
    throw new AfsError("INVALID_ARGUMENT", 'cannot delete the root "/"; delete the entries inside it instead', {
      path,
    });
  }
  return volume.remove(path, { recursive: args.recursive === true });
}
