// History tools, under the reference's names so clients written for it work: a file's versions,
// one version's content, a diff between versions, restore and undelete; the workspace's activity
// log with a cursor; and its versioning policy. All of them over afs.history and afs.events.
import { z } from "zod";
import { AfsError } from "../../../core/errors.js";
import { OUTCOMES, outcomeOf } from "../../../core/event.js";
import { decodeText } from "../../../core/text.js";
import type { EventFilter, EventRecord, FileVersion, RestoreResult, VersioningPolicy } from "../../../workspace/afs.js";
import { defineTool, EDIT, READ, type Tool, workspaceArg, workspaceFor } from "../tool.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const pathArg = z.string().min(1).describe("The file's path in the workspace, e.g. /src/main.ts.");
const versionArg = z
  .string()
  .min(1)
  .describe("A version id from file_history (or a prefix of at least 4 digits), or a checkpoint name.");

const version = z.object({
  version_id: z.string().nullable().describe("Short content id; null where the change deleted the file."),
  seq: z.number().nullable().describe("The event that made it; null for what the path held before its first change."),
  time: z.string().nullable(),
  actor: z.string().nullable(),
  surface: z.string().nullable().describe("mcp, acp, broker, cli, mount, … (unknown for older changes)."),
  op: z.string(),
  path: z.string().describe("Where the file was then (renames are followed)."),
  size: z.number().nullable(),
  sha256: z.string().nullable(),
  available: z.boolean().describe("False when gc collected the content after the versioning window."),
  checkpoints: z.array(z.string()).describe("Checkpoints that hold this version at this path."),
});

const versionItem = (v: FileVersion): z.output<typeof version> => ({
  version_id: v.id,
  seq: v.seq,
  time: iso(v.time),
  actor: v.actor,
  surface: v.surface,
  op: v.op,
  path: v.path,
  size: v.size,
  sha256: v.sha256,
  available: v.available,
  checkpoints: v.checkpoints,
});

const restored = z.object({
  workspace: z.string(),
  path: z.string(),
  from: z.string().describe('"version <id>" or "checkpoint <name>".'),
  kind: z.enum(["file", "dir", "symlink"]),
  sha256: z.string().nullable(),
  revision: z.number(),
});

const restoredItem = (workspace: string, r: RestoreResult): z.output<typeof restored> => ({ workspace, ...r });

const activityEvent = z.object({
  workspace: z.string(),
  seq: z.number(),
  time: z.string(),
  op: z.string(),
  path: z.string(),
  actor: z.string(),
  surface: z.string(),
  outcome: z.enum(OUTCOMES).describe("What the change did to the path (the log holds only changes that happened)."),
  old_sha256: z.string().nullable(),
  new_sha256: z.string().nullable(),
});

const activityItem = (e: EventRecord): z.output<typeof activityEvent> => ({
  workspace: e.workspace,
  seq: e.seq,
  time: new Date(e.time).toISOString(),
  op: e.op,
  path: e.path,
  actor: e.actor,
  surface: e.surface,
  outcome: outcomeOf(e),
  old_sha256: e.oldHash,
  new_sha256: e.newHash,
});

const policy = z.object({
  workspace: z.string(),
  enabled: z.boolean(),
  keep_days: z.number(),
  keep_versions: z.number(),
});

const policyItem = (workspace: string, p: VersioningPolicy): z.output<typeof policy> => ({
  workspace,
  enabled: p.enabled,
  keep_days: p.keepDays,
  keep_versions: p.keepVersions,
});

export const historyTools: readonly Tool[] = [
  defineTool({
    name: "file_history",
    title: "A file's versions",
    family: "file-read",
    description:
      "List a file's versions newest first: each version's id, time, actor, surface (mcp, acp, cli, …), operation (write, replace, rename, delete, sync, restore for a checkpoint restore, …), size, sha256 and the checkpoints holding it; renames are followed back. Pass next_cursor as cursor for older versions.",
    input: z.strictObject({
      workspace: workspaceArg,
      path: pathArg,
      limit: z.number().int().min(1).max(1000).optional().describe("At most this many versions (default 20)."),
      cursor: z.string().optional().describe("next_cursor from a previous call."),
    }),
    output: z.object({
      workspace: z.string(),
      path: z.string(),
      versions: z.array(version),
      next_cursor: z.string().nullable(),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const options: { limit?: number; cursor?: string } = {};
      if (args.limit !== undefined) options.limit = args.limit;
      if (args.cursor !== undefined) options.cursor = args.cursor;
      const page = await ctx.afs.history.versions(workspace, args.path, options);
      return { workspace, path: args.path, versions: page.versions.map(versionItem), next_cursor: page.next };
    },
    text: (r) =>
      r.versions.length === 0
        ? `${r.path} has no recorded history`
        : r.versions
            .map(
              (v) =>
                `${v.version_id ?? "(deleted)"}  ${v.time ?? "-"}  ${v.actor ?? "-"}/${v.surface ?? "-"}  ${v.op}  ${v.path}${v.checkpoints.length ? `  [${v.checkpoints.join(", ")}]` : ""}`,
            )
            .join("\n"),
  }),

  defineTool({
    name: "file_read_version",
    title: "Read a version of a file",
    family: "file-read",
    description:
      "Read one version of a file, named by its version id (file_history) or by a checkpoint name. Text comes back as content; other bytes as content_base64.",
    input: z.strictObject({ workspace: workspaceArg, path: pathArg, version: versionArg }),
    output: z.object({
      workspace: z.string(),
      path: z.string(),
      version: z.string(),
      sha256: z.string(),
      size: z.number(),
      content: z.string().optional(),
      content_base64: z.string().optional(),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const v = await ctx.afs.history.read(workspace, args.path, args.version);
      if (v.size > ctx.limits.maxReadBytes) {
        throw new AfsError(
          "QUOTA_EXCEEDED",
          `${v.version} of ${v.path} is ${v.size} bytes, over the ${ctx.limits.maxReadBytes}-byte read limit`,
          { path: v.path },
        );
      }
      const text = decodeText(v.data);
      const base = { workspace, path: v.path, version: v.version, sha256: v.sha256, size: v.size };
      return text === null ? { ...base, content_base64: v.data.toString("base64") } : { ...base, content: text };
    },
    text: (r) => r.content ?? `(${r.size} bytes of binary content, base64 in content_base64)`,
  }),

  defineTool({
    name: "file_diff_versions",
    title: "Diff two versions of a file",
    family: "file-read",
    description:
      "A unified diff of a file between two versions or checkpoints (from → to); without to, from that version to the live file.",
    input: z.strictObject({
      workspace: workspaceArg,
      path: pathArg,
      from: versionArg,
      to: versionArg.optional().describe("A version id or checkpoint; the live file when omitted."),
    }),
    output: z.object({
      workspace: z.string(),
      path: z.string(),
      from: z.string(),
      to: z.string(),
      patch: z.string(),
      binary: z.boolean(),
    }),
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      return { workspace, ...(await ctx.afs.history.diff(workspace, args.path, args.from, args.to)) };
    },
    text: (r) => (r.binary ? `binary contents differ (${r.from} → ${r.to})` : r.patch || "no differences"),
  }),

  defineTool({
    name: "file_restore_version",
    title: "Restore a version of a file",
    family: "file-write",
    description:
      "Bring back a version of a file (by version id or checkpoint), or a whole directory as a checkpoint holds it, as one change. What it replaces stays in the history.",
    input: z.strictObject({ workspace: workspaceArg, path: pathArg, version: versionArg }),
    output: restored,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const by = { actor: ctx.actor, surface: "mcp" };
      return restoredItem(workspace, await ctx.afs.history.restore(workspace, args.path, args.version, by));
    },
    text: (r) => `restored ${r.path} from ${r.from}`,
  }),

  defineTool({
    name: "file_undelete",
    title: "Undelete a file",
    family: "file-write",
    description:
      "Bring back a deleted file's last version (a deleted directory from the newest checkpoint holding it). Fails if something is at the path now.",
    input: z.strictObject({ workspace: workspaceArg, path: pathArg }),
    output: restored,
    annotations: EDIT,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const by = { actor: ctx.actor, surface: "mcp" };
      return restoredItem(workspace, await ctx.afs.history.undelete(workspace, args.path, by));
    },
    text: (r) => `undeleted ${r.path} from ${r.from}`,
  }),

  defineTool({
    name: "workspace_activity",
    title: "Workspace activity",
    family: "file-read",
    description:
      "The workspace's activity log: who changed what, through which surface, checkpoints and restores included. Without cursor, the newest changes; pass next_cursor later to get only what happened since. every_workspace: the newest changes of every workspace the session may see, merged in time order.",
    input: z.strictObject({
      workspace: workspaceArg,
      every_workspace: z
        .boolean()
        .optional()
        .describe("The newest changes across every workspace this session may see (no cursor; workspace not given)."),
      path: z.string().optional().describe("Only this path and what is below it."),
      actor: z.string().optional().describe("Only changes by this actor."),
      surface: z.string().optional().describe("Only changes through this surface (mcp, cli, mount, acp, broker, …)."),
      outcome: z.enum(OUTCOMES).optional().describe("Only changes with this outcome."),
      since: z.string().optional().describe("Only changes at or after this ISO time."),
      limit: z.number().int().min(1).max(1000).optional().describe("At most this many changes (default 50)."),
      cursor: z.string().optional().describe("next_cursor from a previous call: changes after it, oldest first."),
    }),
    output: z.object({
      workspace: z.string().nullable().describe("Null with every_workspace."),
      events: z.array(activityEvent),
      next_cursor: z.string().describe("Empty with every_workspace, which has no cursor."),
      more: z.boolean().describe("Whether changes after next_cursor were already there (call again)."),
    }),
    annotations: READ,
    async run(ctx, args) {
      const filter: EventFilter = {};
      if (args.path !== undefined) filter.path = args.path;
      if (args.actor !== undefined) filter.actor = args.actor;
      if (args.surface !== undefined) filter.surface = args.surface;
      if (args.outcome !== undefined) filter.outcome = args.outcome;
      if (args.since !== undefined) {
        const since = Date.parse(args.since);
        if (Number.isNaN(since)) {
          throw new AfsError(
            "INVALID_ARGUMENT",
            `since must be an ISO time like 2025-01-31T14:05:00Z, not ${args.since}`,
          );
        }
        filter.since = since;
      }
      const limit = Math.min(args.limit ?? 50, ctx.limits.maxResults);
      if (args.every_workspace) {
        if (args.workspace !== undefined || args.cursor !== undefined) {
          throw new AfsError(
            "INVALID_ARGUMENT",
            "every_workspace takes neither workspace nor cursor; to page one workspace's log, name it and pass its next_cursor",
          );
        }
        // A pinned session sees its own workspace only, as every other call of it does.
        const names =
          ctx.pinned && ctx.workspace !== null ? [ctx.workspace] : (await ctx.afs.workspaces.list()).map((w) => w.name);
        const events = await ctx.afs.events.recentAcross(names, { ...filter, limit });
        return { workspace: null, events: events.map(activityItem), next_cursor: "", more: false };
      }
      const workspace = await workspaceFor(ctx, args.workspace);
      if (args.cursor === undefined) {
        const events = await ctx.afs.events.recent(workspace, { ...filter, limit });
        const { revision } = await ctx.afs.workspaces.get(workspace);
        const last = events[events.length - 1]?.seq ?? 0;
        return {
          workspace,
          events: events.map(activityItem),
          next_cursor: String(Math.max(last, revision)),
          more: false,
        };
      }
      const after = Number(args.cursor);
      const page = await ctx.afs.events.list(workspace, { ...filter, after, limit });
      return { workspace, events: page.events.map(activityItem), next_cursor: String(page.next), more: page.more };
    },
    text: (r) =>
      r.events.length === 0
        ? "no changes"
        : r.events
            .map(
              (e) =>
                `${e.time}  ${r.workspace === null ? `${e.workspace}  ` : ""}${e.actor}/${e.surface}  ${e.op}  ${e.path}`,
            )
            .join("\n"),
  }),

  defineTool({
    name: "workspace_get_versioning_policy",
    title: "Get a workspace's versioning policy",
    family: "admin-read",
    description:
      "How long old versions of the workspace's files stay readable: keep_days (every version of the last so many days) and keep_versions (the newest so many per file); gc keeps them.",
    input: z.strictObject({ workspace: workspaceArg }),
    output: policy,
    annotations: READ,
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      return policyItem(workspace, await ctx.afs.history.policy(workspace));
    },
    text: (r) =>
      r.enabled
        ? `versions kept ${r.keep_days} days${r.keep_versions ? ` and the newest ${r.keep_versions} per file` : ""}`
        : "versioning off",
  }),

  defineTool({
    name: "workspace_set_versioning_policy",
    title: "Set a workspace's versioning policy",
    family: "admin-write",
    description:
      "Change how long old versions stay readable; fields left out keep their value. enabled false keeps no old versions (gc then collects what only history named).",
    input: z.strictObject({
      workspace: workspaceArg,
      enabled: z.boolean().optional(),
      keep_days: z.number().int().min(0).max(36_500).optional(),
      keep_versions: z.number().int().min(0).max(1_000_000).optional(),
    }),
    output: policy,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async run(ctx, args) {
      const workspace = await workspaceFor(ctx, args.workspace);
      const change = {
        keepDays: args.keep_days,
        keepVersions: args.keep_versions,
        off: args.enabled === undefined ? undefined : !args.enabled,
      };
      return policyItem(workspace, await ctx.afs.history.setPolicy(workspace, change));
    },
    text: (r) => (r.enabled ? `versions kept ${r.keep_days} days` : "versioning off"),
  }),
];
