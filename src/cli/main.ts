#!/usr/bin/env node
// The `afs` command line: global options, the command groups, and the one place where errors
// become a line on stderr and an exit status.
import { Command } from "commander";
import { VERSION } from "../workspace/afs.js";
import { registerAcp } from "./commands/acp.js";
import { registerBroker } from "./commands/broker.js";
import { registerCheckpointCommands } from "./commands/cp.js";
import { registerFsCommands } from "./commands/fs.js";
import { registerIndexCommands } from "./commands/index.js";
import { registerMaintenanceCommands } from "./commands/maintenance.js";
import { registerMcp } from "./commands/mcp.js";
import { registerServe } from "./commands/serve.js";
import { registerTokenCommands } from "./commands/token.js";
import { registerWorkspaceCommands } from "./commands/ws.js";
import { closeOnSignals, globalOptions, workspaceOption } from "./context.js";
import { report } from "./errors.js";

export function buildProgram(): Command {
  const program = new Command("afs")
    .description("the agent filesystem: versioned workspaces with checkpoints and forks")
    .version(VERSION, "-V, --version")
    // Options before the subcommand belong to afs itself, so `-w` stays free for `fs grep -w`.
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      outputError: (text, write) =>
        write(
          `${text
            .trim()
            .replace(/^error: /, "afs: ")
            .replace(/\s*\n\s*/g, " ")}\n`,
        ),
    });
  workspaceOption(globalOptions(program));
  registerWorkspaceCommands(program);
  registerCheckpointCommands(program);
  registerFsCommands(program);
  registerIndexCommands(program);
  registerMaintenanceCommands(program);
  registerMcp(program);
  registerAcp(program);
  registerBroker(program);
  registerServe(program);
  registerTokenCommands(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv], { from: "user" });
    return 0;
  } catch (e) {
    return report(e);
  }
}

closeOnSignals();
// A reader that stops early (`afs fs cat big.txt | head`) is not a failure: drop the rest quietly.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") process.exitCode = report(e);
});
// exitCode rather than exit(): stdout (possibly a pipe) drains before the process ends.
process.exitCode = await main(process.argv.slice(2));
