// `afs acp [--dir DIR] [--workspace NAME] [--approve MODE] [--prompt TEXT] [--prefer SIDE] -- AGENT CMD…`:
// runs an ACP agent on DIR, mounted on the workspace for the session, with afs as its client, every
// turn checkpointed (the run itself: ../acp-run.ts, loaded only when the command runs, so other
// commands do not pay for the ACP SDK).
import { type Command, Option } from "commander";
import { APPROVAL_MODES } from "../../access/approvals.js";
import { globals, type Io, workspaceOption } from "../context.js";
import { leaf } from "./leaf.js";

export function registerAcp(program: Command, io: Io): void {
  workspaceOption(
    leaf(
      program,
      "acp",
      "run an ACP agent on a directory, mounted on its workspace for the session, every turn checkpointed",
      false,
    ),
  )
    .usage("[options] -- AGENT [ARGS...]")
    .argument("<agent...>", "the agent's command line, after --")
    .option("--dir <dir>", "the project directory the agent works in (default: the current directory)")
    .option("--approve <mode>", `writes and permission requests: ${APPROVAL_MODES.join(", ")}`, "ask")
    .option("--prompt <text>", "run one turn with this prompt, then exit (status 0 when it ended normally)")
    .option("--init-timeout <seconds>", "how long the agent may take to answer initialize", "30")
    .addOption(
      new Option(
        "--prefer <side>",
        "first mount of DIR when it and the workspace hold differing files: the side that stays (the other's versions are kept as conflict copies)",
      ).choices(["local", "remote"]),
    )
    .option("--adopt", "deprecated: --prefer local")
    .action((agent: string[], flags, cmd: Command) =>
      io.withAfs(cmd, async (afs) =>
        (await import("../acp-run.js")).runAcp(afs, agent, flags, globals(cmd).workspace, io),
      ),
    );
}
