// create_exclusive: creates a file only if nothing exists at the path; of any number of racing
// creators exactly one wins, and its content lands together with the claim.
import { z } from "zod";
import type { MutationResult, Volume } from "../volume/volume.js";
import { encodingArg, pathArg } from "./args.js";
import { normalizePath } from "./common.js";
import { contentBytes } from "./content.js";

export const createExclusiveArgs = z.strictObject({
  path: pathArg.describe(
    "Path of the file to create. Fails with ALREADY_EXISTS if anything (file, directory or symlink) is there, so it works as a lock or claim.",
  ),
  content: z.string().describe("The content of the new file."),
  encoding: encodingArg,
});
export type CreateExclusiveArgs = z.infer<typeof createExclusiveArgs>;

export async function createExclusive(volume: Volume, args: CreateExclusiveArgs): Promise<MutationResult> {
  const path = normalizePath(args.path);
  const data = contentBytes(args.content, args.encoding, path);
  return volume.writeFile(path, data, { op: "create_exclusive", expectSha256: null });
}
