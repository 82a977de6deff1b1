// Token tools of the HTTP control plane: mint a workspace-scoped token for another agent, list
// them (never their secrets), revoke one.
import { z } from "zod";
import { issueToken, revokeToken, tokenInfo } from "../../../access/tokens.js";
import { ADDITIVE, defineTool, READ, type Tool } from "../tool.js";

export const tokenTools: readonly Tool[] = [
  defineTool({
    name: "mcp_token_issue",
    title: "Issue a workspace token",
    family: "token",
    description:
      "Issue a bearer token for this MCP endpoint, pinned to one workspace with a workspace profile (default workspace-rw). The token is returned once and cannot be shown again; hand it to the agent that needs it.",
    input: z.strictObject({
      workspace: z.string().min(1).describe("The workspace the token may use."),
      name: z.string().optional().describe("A name to recognise the token by in listings."),
      profile: z
        .enum(["workspace-ro", "workspace-rw", "workspace-rw-checkpoint"])
        .optional()
        .describe("What the token may do (default workspace-rw)."),
      expires_at: z.string().optional().describe("ISO 8601 time after which the token stops working."),
    }),
    output: z.object({
      token_id: z.string(),
      token: z.string().describe("The bearer secret: send it as Authorization: Bearer <token>."),
      workspace: z.string(),
      profile: z.string(),
      name: z.string(),
      expires_at: z.string().nullable(),
    }),
    annotations: ADDITIVE,
    transports: ["http"],
    async run(ctx, args) {
      const { token, secret } = await issueToken(ctx.afs.tokens, {
        workspace: args.workspace,
        profile: args.profile,
        name: args.name,
        expiresAt: args.expires_at,
        actor: ctx.actor ?? "mcp",
      });
      return {
        token_id: token.id,
        token: secret,
        workspace: args.workspace,
        profile: token.profile,
        name: token.name,
        expires_at: token.expiresAt === null ? null : new Date(token.expiresAt).toISOString(),
      };
    },
    text: (r) =>
      `issued token ${r.token_id} (${r.profile} on workspace ${r.workspace}${r.expires_at ? `, expires ${r.expires_at}` : ""}): ${r.token}`,
  }),

  defineTool({
    name: "mcp_token_list",
    title: "List tokens",
    family: "token",
    description:
      "List the bearer tokens of this endpoint: id, name, scope, workspace, profile, times and status (active, expired, revoked), newest first. Secrets are never shown; a lost one is replaced by issuing a new token and revoking the old.",
    input: z.strictObject({
      workspace: z.string().min(1).optional().describe("Only the tokens pinned to this workspace."),
      active_only: z.boolean().optional().describe("Leave out expired and revoked tokens."),
    }),
    output: z.object({
      tokens: z.array(
        z.object({
          token_id: z.string(),
          name: z.string(),
          scope: z.enum(["workspace", "control-plane"]),
          workspace: z.string().nullable(),
          profile: z.string(),
          created_at: z.string(),
          expires_at: z.string().nullable(),
          revoked_at: z.string().nullable(),
          status: z.enum(["active", "expired", "revoked"]),
        }),
      ),
    }),
    annotations: READ,
    transports: ["http"],
    async run(ctx, args) {
      const now = Date.now();
      const tokens = (await ctx.afs.tokens.list())
        .filter((t) => args.workspace === undefined || t.workspace === args.workspace)
        .sort((a, b) => b.createdAt - a.createdAt)
        .map((t) => tokenInfo(t, now))
        .filter((t) => !args.active_only || t.status === "active");
      return { tokens };
    },
    text: (r) =>
      r.tokens.length === 0
        ? "no tokens"
        : r.tokens
            .map((t) => `${t.token_id}  ${t.status}  ${t.profile}  ${t.workspace ?? "(control plane)"}  ${t.name}`)
            .join("\n"),
  }),

  defineTool({
    name: "mcp_token_revoke",
    title: "Revoke a token",
    family: "token",
    description: "Revoke a token by its id; it stops working from the next request on.",
    input: z.strictObject({ token_id: z.string().min(1).describe("Id of the token to revoke.") }),
    output: z.object({ token_id: z.string(), revoked: z.boolean() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    transports: ["http"],
    async run(ctx, args) {
      await revokeToken(ctx.afs.tokens, args.token_id);
      return { token_id: args.token_id, revoked: true };
    },
    text: (r) => `revoked token ${r.token_id}`,
  }),
];
