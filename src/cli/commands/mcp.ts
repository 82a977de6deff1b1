// `afs mcp`: the MCP server over stdio (newline-delimited JSON-RPC). stdout belongs to the
// protocol; the one startup line and any diagnostics go to stderr.
import type { Command } from "commander";
import { bindSession } from "../../access/binding.js";
import { resolveLimits } from "../../access/limits.js";
import { DEFAULT_PROFILE, PROFILES, type Profile, parseProfile } from "../../access/profiles.js";
import type { Afs } from "../../workspace/afs.js";
import { globalOptions, globals, type Io, workspaceOption } from "../context.js";

export function registerMcp(program: Command, io: Io): void {
  workspaceOption(globalOptions(program.command("mcp"), true))
    .description("serve the afs tools to an MCP host over stdio")
    .option("--profile <profile>", `what the host may do: ${PROFILES.join(", ")}`, DEFAULT_PROFILE)
    .action((flags: { profile: string }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const profile = parseProfile(flags.profile);
        // --workspace, $AFS_WORKSPACE or the current one; required when the profile is bound.
        const workspace = await bindSession(afs, {
          profile,
          requested: globals(cmd).workspace,
          fallback: true,
          env: io.env,
        });
        await serveStdio(afs, profile, workspace, io);
      }),
    );
}

async function serveStdio(afs: Afs, profile: Profile, workspace: string | null, io: Io): Promise<void> {
  // Loaded here, not at the top: every other afs command would pay for the SDKs and the tool table.
  const { serveStdioBothEras } = await import("../../protocols/mcp/stdio.js");
  const serving = serveStdioBothEras({
    afs,
    profile,
    workspace,
    pinned: false,
    transport: "stdio",
    limits: resolveLimits({}, afs.settings.env),
  });
  // The protocol owns this process's own stdin and stdout (afs mcp is never run for another caller).
  // The transport closes itself at end of stdin; a host that closes our stdout (EPIPE) has gone too:
  // stop instead of crashing on the write.
  process.stdout.on("error", () => void serving.close());
  io.warn(`afs mcp: serving ${workspace ? `workspace ${workspace}` : "no workspace"} with profile ${profile}\n`);
  await serving.closed;
}
