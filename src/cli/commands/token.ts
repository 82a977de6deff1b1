// `afs token …`: bearer tokens for `afs serve`. issue prints the secret once; list never shows it.
import { type Command, Option } from "commander";
import { PROFILES } from "../../access/profiles.js";
import { issueToken, revokeToken, tokenInfo } from "../../access/tokens.js";
import { AfsError } from "../../core/errors.js";
import { globals, type Io, workspaceOption } from "../context.js";
import { type JsonFlag, table } from "../output.js";
import { leaf } from "./leaf.js";

interface IssueFlags extends JsonFlag {
  controlPlane?: boolean;
  profile?: string;
  name?: string;
  expiresAt?: string;
}

export function registerTokenCommands(program: Command, io: Io): void {
  const token = program.command("token").description("bearer tokens for afs serve");

  workspaceOption(leaf(token, "issue", "issue a token and print its secret (shown only this once)"))
    .option("--control-plane", "a control-plane token (admin profiles) instead of a workspace token")
    .addOption(
      new Option(
        "--profile <profile>",
        "workspace-rw (default) for a workspace, admin-ro (default) for the control plane",
      ).choices(PROFILES),
    )
    .option("--name <name>", "a name to recognise the token by")
    .option("--expires-at <iso>", "when the token stops working, e.g. 2030-01-31T12:00:00Z")
    .action((flags: IssueFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const workspace = globals(cmd).workspace;
        if (flags.controlPlane && workspace !== undefined) {
          throw new AfsError("INVALID_ARGUMENT", "give either --workspace or --control-plane, not both");
        }
        if (!flags.controlPlane && workspace === undefined) {
          throw new AfsError(
            "INVALID_ARGUMENT",
            "a token needs --workspace NAME, or --control-plane for the admin tools",
          );
        }
        const { token: t, secret } = await issueToken(afs.tokens, {
          workspace: flags.controlPlane ? undefined : workspace,
          profile: flags.profile,
          name: flags.name,
          expiresAt: flags.expiresAt,
          actor: afs.settings.actor ?? "cli",
        });
        io.emit(flags, { ...tokenInfo(t), token: secret }, (r) => [
          r.token,
          `token ${r.token_id}: ${r.profile} on ${r.workspace ?? "the control plane"}${r.expires_at ? `, expires ${r.expires_at}` : ""}`,
          "the secret above is shown only once; send it as Authorization: Bearer <token>",
        ]);
      }),
    );

  leaf(token, "list", "list tokens (never their secrets)").action((flags: JsonFlag, cmd: Command) =>
    io.withAfs(cmd, async (afs) => {
      const tokens = (await afs.tokens.list()).map((t) => tokenInfo(t));
      io.emit(flags, tokens, (list) =>
        table(
          ["ID", "NAME", "SCOPE", "PROFILE", "CREATED", "EXPIRES", "STATUS"],
          list.map((t) => [
            t.token_id,
            t.name,
            t.workspace ?? "control-plane",
            t.profile,
            io.time(t.created_at),
            t.expires_at ? io.time(t.expires_at) : "-",
            t.status,
          ]),
        ),
      );
    }),
  );

  leaf(token, "revoke <id>", "revoke a token; it stops working on its next request").action(
    (id: string, flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        await revokeToken(afs.tokens, id);
        io.emit(flags, { token_id: id, revoked: true }, () => `revoked token ${id}`);
      }),
  );
}
