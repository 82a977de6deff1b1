// `afs fs cat PATH`: a file's bytes to stdout, registered on its own so the hottest command loads
// no operation schema (and no zod): the same answers and errors as the read operation, with
// `--json` handing over to it.
import type { Command } from "commander";
import { AfsError } from "../../core/errors.js";
import { decodeText } from "../../core/text.js";
import { mustStat, normalizePath } from "../../ops/common.js";
import { isDirectory } from "../../volume/errors.js";
import type { Volume } from "../../volume/volume.js";
import { type Io, workspaceOption } from "../context.js";
import type { JsonFlag } from "../output.js";
import { leaf } from "./leaf.js";

/** Registers `cat` on the `fs` group. */
export function registerFsCat(fs: Command, io: Io): void {
  workspaceOption(leaf(fs, "cat", "write a file's bytes to stdout (binary too)"))
    .argument("<path>", "the file to print")
    .option("--version <version>", "an older version: its id (afs fs history) or a checkpoint name")
    .action((path: string, flags: JsonFlag & { version?: string }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, workspace) => {
        if (flags.version !== undefined) {
          const v = await afs.history.read(workspace, path, flags.version);
          if (!flags.json) return io.write(v.data);
          const text = decodeText(v.data);
          const { data: _, ...rest } = v;
          io.emit(
            flags,
            text === null ? { ...rest, content_base64: v.data.toString("base64") } : { ...rest, text },
            () => [],
          );
          return;
        }
        const volume = await afs.workspaces.volume(workspace);
        if (flags.json) {
          const { read } = await import("../../ops/read.js");
          io.emit(flags, await read(volume, { path }), () => []);
          return;
        }
        io.write(await catBytes(volume, normalizePath(path)));
      }),
    );
}

async function catBytes(volume: Volume, path: string): Promise<Buffer> {
  const stat = await mustStat(volume, path);
  if (stat.kind === "dir") throw isDirectory(path);
  if (stat.kind === "symlink") {
    throw new AfsError("INVALID_ARGUMENT", `${path} is a symlink to ${stat.target}; cat the target instead`);
  }
  return volume.readFile(path);
}
