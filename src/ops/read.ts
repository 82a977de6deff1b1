// read: a file's content (text, or base64 on request), or a symlink's target.
import { z } from "zod";
import { type Hash, sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { isDirectory } from "../volume/errors.js";
import type { Stat, Volume } from "../volume/volume.js";
import { encodingArg, pathArg } from "./args.js";
import { mustStat, normalizePath } from "./common.js";

export const readArgs = z.strictObject({
  path: pathArg,
  encoding: encodingArg.describe(
    '"text" (default) returns UTF-8 text; a binary file then comes back with binary: true and no content. "base64" returns the raw bytes base64-encoded.',
  ),
});
export type ReadArgs = z.infer<typeof readArgs>;

export interface ReadResult {
  path: string;
  kind: "file" | "symlink";
  size: number;
  sha256: Hash;
  /** Absent for a symlink, and for a binary file read as text. */
  content?: string;
  encoding?: "text" | "base64";
  /** True when the file is not UTF-8 text (a NUL byte in its first 8 KiB, or invalid UTF-8). */
  binary?: boolean;
  /** Only for a symlink: its target, not followed. */
  target?: string;
}

export interface ReadOptions {
  /** Called with the file's stat before its bytes are read (a face's size limit throws here). */
  check?: (stat: Stat) => void;
}

export async function read(volume: Volume, args: ReadArgs, options: ReadOptions = {}): Promise<ReadResult> {
  const path = normalizePath(args.path);
  const stat = await mustStat(volume, path);
  if (stat.kind === "dir") throw isDirectory(path);
  if (stat.kind === "symlink") {
    const target = stat.target ?? "";
    return { path, kind: "symlink", size: stat.size, sha256: stat.sha256 ?? sha256(target), target };
  }
  options.check?.(stat);
  // By the content the stat resolved when the volume can (one resolution, and its hash is known).
  const byStat = stat.sha256 !== undefined && volume.readContent !== undefined;
  const data = byStat ? await (volume.readContent as (s: Stat) => Promise<Buffer>)(stat) : await volume.readFile(path);
  const base = {
    path,
    kind: "file" as const,
    size: data.length,
    sha256: byStat ? (stat.sha256 as Hash) : sha256(data),
  };
  const text = decodeText(data);
  if (args.encoding === "base64") {
    return {
      ...base,
      content: data.toString("base64"),
      encoding: "base64",
      ...(text === null ? { binary: true } : {}),
    };
  }
  if (text === null) return { ...base, binary: true };
  return { ...base, content: text, encoding: "text" };
}
