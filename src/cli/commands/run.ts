// `afs run [-w WORKSPACE] [--dir DIR] -- COMMAND [ARGS...]`: any command in a mounted directory,
// checkpointed before and after, with what it changed and how to undo it (the run itself:
// ../mounted-run.ts).
import type { Command } from "commander";
import { globals, type Io, workspaceOption } from "../context.js";
import { leaf } from "./leaf.js";

export function registerRun(program: Command, io: Io): void {
  workspaceOption(
    leaf(program, "run", "run a command in a mounted directory, checkpointed before and after; exits with its status"),
  )
    .usage("[options] -- COMMAND [ARGS...]")
    .argument("<command...>", "the command line, after --")
    .option(
      "--dir <dir>",
      "the directory (default: the current one, or the mounted directory it lies in); mounted first when it is not",
    )
    // Everything after the command's name is the command's: `afs run ls -la` passes -la to ls.
    .passThroughOptions()
    .addHelpText(
      "after",
      "\nWhat the command changed is printed on stderr (with --json: as JSON on stdout, after the command's own output),\nwith the checkpoint to restore to undo it. The directory stays mounted afterwards.",
    )
    .action((command: string[], flags: { dir?: string; json?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) =>
        (await import("../mounted-run.js")).runMounted(afs, io, command, {
          dir: flags.dir,
          json: flags.json,
          explicitWorkspace: globals(cmd).workspace,
          workspace: io.workspace(cmd),
        }),
      ),
    );
}
