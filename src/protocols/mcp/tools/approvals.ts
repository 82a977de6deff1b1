// Approval tools of the HTTP control plane: what waiting `afs broker --consent console` and `afs acp
// --approve console` processes ask a person (the console's /approvals page calls these), the answer,
// and the end of a grant. The queue and its rules live in access/approval-queue.ts.
import { z } from "zod";
import { ApprovalQueue, type ApprovalView, OUTCOMES } from "../../../access/approval-queue.js";
import { defineTool, type Tool, type ToolContext } from "../tool.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

const approvalOut = z.object({
  id: z.string(),
  kind: z.enum(["consent", "write", "permission"]),
  state: z.enum(["pending", ...OUTCOMES]),
  title: z.string(),
  message: z.string(),
  process: z.string().describe("The asking process (afs broker, afs acp)."),
  pid: z.number(),
  agent: z.string().describe("The MCP server or ACP agent the request is for."),
  machine: z.string(),
  session: z.string().nullable(),
  workspace: z.string().nullable(),
  roots: z.array(z.string()),
  paths: z.array(z.string()).describe("The paths asked for; approval_decide may allow some of them."),
  host_paths: z.array(z.string().nullable()),
  diff: z.string().nullable().describe("A unified diff of the change asked for, when there is one."),
  diff_truncated: z.boolean(),
  created_at: z.string(),
  expires_at: z.string(),
  decision: z
    .object({
      outcome: z.enum(OUTCOMES),
      paths: z.array(z.string()),
      grant: z.boolean(),
      note: z.string().nullable(),
      by: z.string(),
      at: z.string(),
    })
    .nullable(),
  revoked_at: z.string().nullable(),
});
type ApprovalOut = z.infer<typeof approvalOut>;

const out = (v: ApprovalView): ApprovalOut => ({
  id: v.id,
  kind: v.kind,
  state: v.state,
  title: v.title,
  message: v.message,
  process: v.process,
  pid: v.pid,
  agent: v.agent,
  machine: v.machine,
  session: v.session,
  workspace: v.workspace,
  roots: v.roots,
  paths: v.paths,
  host_paths: v.hostPaths,
  diff: v.diff,
  diff_truncated: v.diffTruncated,
  created_at: iso(v.createdAt) as string,
  expires_at: iso(v.expiresAt) as string,
  decision: v.decision && { ...v.decision, at: iso(v.decision.at) as string },
  revoked_at: iso(v.revokedAt),
});

const queue = (ctx: ToolContext): ApprovalQueue => new ApprovalQueue(ctx.afs.approvals);
const who = (ctx: ToolContext): string => ctx.actor ?? "console";

export const approvalTools: readonly Tool[] = [
  defineTool({
    name: "approval_list",
    title: "List approval requests",
    family: "admin-read",
    description:
      "Requests waiting for a person (file access asked by a server under afs broker --consent console, writes and permissions asked by an agent under afs acp --approve console), with their paths and diffs; the grants still in force; and recent decisions. Answer one with approval_decide.",
    input: z.strictObject({}),
    output: z.object({
      pending: z.array(approvalOut),
      grants: z.array(approvalOut),
      recent: z.array(approvalOut),
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    transports: ["http"],
    async run(ctx) {
      const list = await queue(ctx).list();
      return { pending: list.pending.map(out), grants: list.grants.map(out), recent: list.recent.map(out) };
    },
    text: (r) =>
      [
        `${r.pending.length} waiting, ${r.grants.length} grants in force`,
        ...r.pending.map(
          (p) => `  ${p.id} ${p.kind} from ${p.agent} (${p.process} on ${p.machine}): ${p.paths.join(", ")}`,
        ),
        ...r.grants.map((g) => `  grant ${g.id} for ${g.agent}: ${g.decision?.paths.join(", ")}`),
      ].join("\n"),
  }),

  defineTool({
    name: "approval_decide",
    title: "Decide an approval request",
    family: "admin-write",
    description:
      'Answer a waiting request from approval_list: allow every path asked ("all"), allow some of them (a list), or deny (false), with an optional note the asker sees. The waiting process resumes within a second. grant: true keeps an agent\'s write allow for the rest of its session (a consent allow always stays as a grant until revoked).',
    input: z.strictObject({
      id: z.string().min(1).describe("The request's id, from approval_list."),
      allow: z
        .union([z.literal("all"), z.literal(false), z.array(z.string()).min(1)])
        .describe('"all", some of the request\'s paths, or false to deny.'),
      grant: z.boolean().optional().describe("Keep the allow for later writes to these paths in the same session."),
      note: z.string().max(2000).optional().describe("Why, for the asker (shown with a refusal)."),
    }),
    output: approvalOut,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    transports: ["http"],
    async run(ctx, args) {
      return out(
        await queue(ctx).decide(args.id, {
          allow: args.allow,
          ...(args.grant === undefined ? {} : { grant: args.grant }),
          note: args.note ?? null,
          by: who(ctx),
        }),
      );
    },
    text: (r) => `${r.state} ${r.id}${r.decision?.paths.length ? `: ${r.decision.paths.join(", ")}` : ""}`,
  }),

  defineTool({
    name: "approval_revoke_grant",
    title: "Revoke a grant",
    family: "admin-write",
    description:
      "End a grant listed by approval_list: the process holding it refuses the next operation on those paths and stops the ones running.",
    input: z.strictObject({ id: z.string().min(1).describe("The grant's id (its request's id), from approval_list.") }),
    output: approvalOut,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    transports: ["http"],
    async run(ctx, args) {
      return out(await queue(ctx).revokeGrant(args.id));
    },
    text: (r) => `revoked grant ${r.id}`,
  }),
];
