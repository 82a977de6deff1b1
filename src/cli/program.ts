// The `afs` command line: global options, the command groups, and the one place where errors
// become a line on stderr and an exit status. It runs one invocation (argv, cwd, env, streams) as
// a value, so the resident afs runs it too, once per client and several at once.
import { Command } from "commander";
import { readSettings } from "../core/settings.js";
import { VERSION } from "../workspace/version.js";
import { commandOf } from "./command-words.js";
import { type Engines, globalOptions, Io, ownEngines, type Register, workspaceOption } from "./context.js";
import { report } from "./errors.js";
import type { Invocation } from "./invocation.js";

/**
 * Each top-level command's module, loaded only when that command runs: a process that prints a
 * file should not compile the MCP server, the broker and every operation's schema first.
 */
const GROUPS: Readonly<Record<string, (sub: string | undefined) => Promise<Register>>> = {
  ws: async () => (await import("./commands/ws.js")).registerWorkspaceCommands,
  cp: async () => (await import("./commands/cp.js")).registerCheckpointCommands,
  // Per subcommand: `afs fs ls` loads the list operation only, `afs fs cat` no operation at all.
  fs: async (sub) => (await import("./commands/fs.js")).fsGroup(sub),
  index: async () => (await import("./commands/index.js")).registerIndexCommands,
  log: async () => (await import("./commands/log.js")).registerLog,
  gc: async () => (await import("./commands/maintenance.js")).registerMaintenanceCommands,
  fsck: async () => (await import("./commands/maintenance.js")).registerMaintenanceCommands,
  status: async () => (await import("./commands/maintenance.js")).registerMaintenanceCommands,
  mount: async () => (await import("./commands/mount.js")).registerMountCommands,
  unmount: async () => (await import("./commands/mount.js")).registerMountCommands,
  "mount-run": async () => (await import("./commands/mount.js")).registerMountCommands,
  run: async () => (await import("./commands/run.js")).registerRun,
  migrate: async () => (await import("./commands/migrate.js")).registerMigrate,
  mcp: async () => (await import("./commands/mcp.js")).registerMcp,
  serve: async () => (await import("./commands/serve.js")).registerServe,
  console: async () => (await import("./commands/serve.js")).registerServe,
  token: async () => (await import("./commands/token.js")).registerTokenCommands,
  acp: async () => (await import("./commands/acp.js")).registerAcp,
  broker: async () => (await import("./commands/broker.js")).registerBroker,
  // Given the runner here, so neither the daemon command nor the resident afs imports this module.
  daemon: async () => {
    const { registerDaemon } = await import("./commands/daemon.js");
    return (program, io) => registerDaemon(program, io, { main, buildProgram });
  },
};

export async function buildProgram(io: Io): Promise<Command> {
  const argv = io.invocation.argv;
  const program = new Command("afs")
    .description("the agent filesystem: versioned workspaces with checkpoints and forks")
    .version(VERSION, "-V, --version")
    // Options before the subcommand belong to afs itself, so `-w` stays free for `fs grep -w`.
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({
      writeOut: io.write,
      writeErr: io.warn,
      outputError: (text, say) =>
        say(
          `${text
            .trim()
            .replace(/^error: /, "afs: ")
            .replace(/\s*\n\s*/g, " ")}\n`,
        ),
    });
  workspaceOption(globalOptions(program));
  const [command, sub] = commandOf(argv);
  const group = command === undefined ? undefined : GROUPS[command];
  // A known command loads its own module; --version alone none; help, or a command afs does not
  // know, all of them (to list them).
  const versionOnly = command === undefined && argv.some((a) => a === "-V" || a === "--version");
  const loaders = group
    ? [group(sub)]
    : versionOnly
      ? []
      : [...new Set(Object.values(GROUPS))].map((load) => load(undefined));
  const registered = new Set<Register>();
  for (const register of await Promise.all(loaders)) {
    if (registered.has(register)) continue;
    registered.add(register);
    register(program, io);
  }
  return program;
}

/** Runs the invocation's command line; engines open per command unless `engines` lends them. */
export async function main(invocation: Invocation, engines: Engines = ownEngines()): Promise<number> {
  const io = new Io(invocation, engines);
  try {
    await (await buildProgram(io)).parseAsync([...invocation.argv], { from: "user" });
    return 0;
  } catch (e) {
    return report(e, io, readSettings(invocation.env).debug);
  }
}
