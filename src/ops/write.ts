// write: replaces a file's whole content (creating it and its parent directories if needed).
import { z } from "zod";
import type { MutationResult, Volume } from "../volume/volume.js";
import { encodingArg, expectedSha256Arg, pathArg } from "./args.js";
import { normalizePath } from "./common.js";
import { contentBytes } from "./content.js";

export const writeArgs = z.strictObject({
  path: pathArg,
  content: z.string().describe("The complete new content of the file."),
  encoding: encodingArg,
  expected_sha256: expectedSha256Arg,
});
export type WriteArgs = z.infer<typeof writeArgs>;

export async function write(volume: Volume, args: WriteArgs): Promise<MutationResult> {
  const path = normalizePath(args.path);
  const data = contentBytes(args.content, args.encoding, path);
  const expectSha256 = args.expected_sha256?.toLowerCase();
  return volume.writeFile(path, data, expectSha256 === undefined ? { op: "write" } : { op: "write", expectSha256 });
}
