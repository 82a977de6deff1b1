// mkdir: creates a directory and any missing parents; an existing directory is fine.
import { z } from "zod";
import type { MutationResult, Volume } from "../volume/volume.js";
import { pathArg } from "./args.js";
import { normalizePath } from "./common.js";

export const mkdirArgs = z.strictObject({
  path: pathArg.describe("Directory to create, with any missing parents. Already existing is not an error."),
});
export type MkdirArgs = z.infer<typeof mkdirArgs>;

export async function mkdir(volume: Volume, args: MkdirArgs): Promise<MutationResult> {
  return volume.mkdir(normalizePath(args.path));
}
