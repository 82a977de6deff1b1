// Status and workspace lifecycle tools: afs_status (stdio), workspace_list/create/fork, and the
// HTTP control plane's workspace_get/delete. create and fork take the local argument shape and the
// hosted control plane's (the reference's), one schema each; get and delete take a name or an id.
import { hostname } from "node:os";
import { z } from "zod";
import { AfsError, isAfsError } from "../../../core/errors.js";
import type { EventRecord } from "../../../core/event.js";
import { mountListing } from "../../../mounts/listing-schema.js";
import { describeMount, listMounts, type MountListing } from "../../../mounts/live.js";
import type { Afs } from "../../../workspace/afs.js";
import type { WorkspaceInfo } from "../../../workspace/info.js";
import { workspaceInfo } from "../schemas.js";
import { ADDITIVE, defineTool, READ, type Tool } from "../tool.js";

const workspaceName = z.string().min(1);

/** A workspace as create, fork and get report it: its fields, with its name as `workspace` and `name` both. */
const workspaceResult = workspaceInfo.extend({ workspace: z.string() });
const asResult = (info: WorkspaceInfo) => ({ workspace: info.name, ...info });

const describe = (r: z.infer<typeof workspaceResult>): string =>
  `workspace ${r.workspace}: head ${r.head}, revision ${r.revision}${r.dirty ? ", live changes not yet checkpointed" : ""}`;

const lastEvent = z
  .object({
    seq: z.number(),
    op: z.string(),
    path: z.string(),
    actor: z.string(),
    surface: z.string(),
    time: z.string().describe("ISO time."),
  })
  .nullable()
  .describe("The newest event in the workspace's log: what changed last, who did it and when (null: none).");

const listedWorkspace = workspaceInfo.extend({
  last_event: lastEvent,
  mounts: z
    .array(mountListing)
    .describe(
      "Directories on this machine (machine) kept in step with the workspace; other machines' mounts are not known here.",
    ),
});

/** The newest event of a workspace: one read of the log's tail (null when it has none, or is gone by now). */
async function newestEvent(afs: Afs, workspace: string): Promise<z.infer<typeof lastEvent>> {
  let e: EventRecord | undefined;
  try {
    [e] = await afs.events.recent(workspace, { limit: 1 });
  } catch (err) {
    if (isAfsError(err) && err.code === "NOT_FOUND") return null;
    throw err;
  }
  return e
    ? { seq: e.seq, op: e.op, path: e.path, actor: e.actor, surface: e.surface, time: new Date(e.time).toISOString() }
    : null;
}

export const adminTools: readonly Tool[] = [
  defineTool({
    name: "afs_status",
    title: "afs status",
    family: "status",
    description:
      "Show the local afs setup: version, data directory (AFS_HOME), store, the current workspace, this session's workspace and profile, and this machine's mounts (directories kept in step with a workspace: state, process, pending changes, conflicts, last sync).",
    input: z.strictObject({}),
    output: z.object({
      version: z.string(),
      home: z.string(),
      store: z.string(),
      current_workspace: z.string().nullable(),
      workspaces: z.number(),
      session_workspace: z.string().nullable(),
      profile: z.string(),
      mounts: z.array(mountListing),
    }),
    annotations: READ,
    transports: ["stdio"],
    async run(ctx) {
      return {
        ...(await ctx.afs.maintenance.status()),
        session_workspace: ctx.workspace,
        profile: ctx.profile,
        mounts: await listMounts(ctx.afs),
      };
    },
    text: (r) =>
      [
        `afs ${r.version}`,
        `home       ${r.home}`,
        `store      ${r.store}`,
        `current    ${r.current_workspace ?? "-"}`,
        `session    ${r.session_workspace ?? "-"} (profile ${r.profile})`,
        `workspaces ${r.workspaces}`,
        `mounts     ${r.mounts.length === 0 ? "none" : r.mounts.length}`,
        ...r.mounts.map((m) => `  ${describeMount(m)}`),
      ].join("\n"),
  }),

  defineTool({
    name: "workspace_list",
    title: "List workspaces",
    family: "admin-read",
    description:
      "List the workspaces: name, id, description, head checkpoint, whether the live state has uncheckpointed changes, the slug of each template (pass it to workspace_create as template_slug), the last event (what changed, who, when), and the directories this machine keeps in step with it (mounts).",
    input: z.strictObject({}),
    output: z.object({
      workspaces: z.array(listedWorkspace),
      current: z.string().nullable(),
      machine: z.string().describe("The host name of the machine that answered; mounts are this machine's."),
    }),
    annotations: READ,
    async run(ctx) {
      const [workspaces, current, mounts] = await Promise.all([
        ctx.afs.workspaces.list(),
        ctx.afs.workspaces.current(),
        listMounts(ctx.afs),
      ]);
      const byWorkspace = new Map<string, MountListing[]>();
      for (const m of mounts) byWorkspace.set(m.workspace, [...(byWorkspace.get(m.workspace) ?? []), m]);
      const listed = await Promise.all(
        workspaces.map(async (w) => ({
          ...w,
          last_event: await newestEvent(ctx.afs, w.name),
          mounts: byWorkspace.get(w.name) ?? [],
        })),
      );
      return { workspaces: listed, current, machine: hostname() };
    },
    text: (r) =>
      r.workspaces.length === 0
        ? "no workspaces yet; create one with workspace_create"
        : r.workspaces
            .map(
              (w) =>
                `${w.name === r.current ? "*" : " "} ${w.name}  head ${w.head}${w.dirty ? " (dirty)" : ""}${w.template ? `  template ${w.template}` : ""}`,
            )
            .join("\n"),
  }),

  defineTool({
    name: "workspace_create",
    title: "Create a workspace",
    family: "admin-write",
    description:
      "Create a workspace: empty, or with template_slug starting from what that template holds now, its live state (like a fork). Takes the local arguments {workspace, description, set_current} or the hosted control plane's {name, description, template_slug}; with set_current it also becomes the current workspace of this afs home.",
    input: z.strictObject({
      workspace: workspaceName
        .optional()
        .describe("Name of the new workspace (local form; required unless name is given)."),
      name: workspaceName.optional().describe("Name of the new workspace (hosted form; the same as workspace)."),
      description: z.string().optional().describe("What the workspace is for."),
      template_slug: z
        .string()
        .min(1)
        .optional()
        .describe("Start from this template (workspace_list shows each template's slug); empty without it."),
      set_current: z.boolean().optional().describe("Also make it the current workspace."),
    }),
    output: workspaceResult.extend({
      current: z.boolean(),
      template_slug: z.string().optional().describe("The template it started from, when one was given."),
    }),
    annotations: ADDITIVE,
    async run(ctx, args) {
      const name = oneOf(args, "workspace", "name");
      const info = await ctx.afs.workspaces.create(name, {
        description: args.description,
        template: args.template_slug,
      });
      if (args.set_current) await ctx.afs.workspaces.use(name);
      const from = args.template_slug === undefined ? {} : { template_slug: args.template_slug };
      return { ...asResult(info), ...from, current: args.set_current === true };
    },
    text: (r) =>
      `created ${describe(r)}${r.template_slug ? ` from template ${r.template_slug}` : ""}${r.current ? "; it is now the current workspace" : ""}`,
  }),

  defineTool({
    name: "workspace_fork",
    title: "Fork a workspace",
    family: "admin-write",
    description:
      "Fork a workspace into a new one that starts from the source's live state (uncheckpointed changes included), or from one of its checkpoints with checkpoint, for a second line of work. The source is not changed. Takes the local arguments {workspace, new_workspace} or the hosted control plane's {source, name}.",
    input: z.strictObject({
      workspace: workspaceName.optional().describe("Source workspace (local form; required unless source is given)."),
      new_workspace: workspaceName
        .optional()
        .describe("Name of the new workspace (local form; required unless name is given)."),
      source: workspaceName.optional().describe("Source workspace (hosted form; the same as workspace)."),
      name: workspaceName.optional().describe("Name of the new workspace (hosted form; the same as new_workspace)."),
      checkpoint: z
        .string()
        .min(1)
        .optional()
        .describe("Start from this checkpoint of the source (checkpoint_list) instead of its live state."),
    }),
    output: workspaceResult.extend({ source: z.string(), created: z.boolean() }),
    annotations: ADDITIVE,
    async run(ctx, args) {
      const source = oneOf(args, "workspace", "source");
      const info = await ctx.afs.workspaces.fork(source, oneOf(args, "new_workspace", "name"), {
        ...(args.checkpoint === undefined ? {} : { checkpoint: args.checkpoint }),
      });
      return { ...asResult(info), source, created: true };
    },
    text: (r) => `forked ${r.source} into ${describe(r)}`,
  }),

  defineTool({
    name: "workspace_get",
    title: "Get a workspace",
    family: "admin-read",
    description:
      "Show one workspace, by name or id: description, head checkpoint, revision, template slug, and whether it has uncheckpointed changes.",
    input: z.strictObject({ workspace: workspaceName.describe("Workspace name or id.") }),
    output: workspaceResult,
    annotations: READ,
    transports: ["http"],
    run: async (ctx, args) => asResult(await ctx.afs.workspaces.find(args.workspace)),
    text: describe,
  }),

  defineTool({
    name: "workspace_delete",
    title: "Delete a workspace",
    family: "admin-write",
    description: "Delete a workspace, by name or id, with all its checkpoints. This cannot be undone.",
    input: z.strictObject({ workspace: workspaceName.describe("Workspace name or id.") }),
    output: z.object({ workspace: z.string().describe("The deleted workspace's name."), deleted: z.boolean() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    transports: ["http"],
    async run(ctx, args) {
      const { name } = await ctx.afs.workspaces.find(args.workspace);
      await ctx.afs.workspaces.delete(name);
      return { workspace: name, deleted: true };
    },
    text: (r) => `deleted workspace ${r.workspace}`,
  }),
];

/**
 * An argument the local and the hosted shapes name differently: either name works, both only
 * when they agree; neither is the same INVALID_ARGUMENT a missing required argument gives.
 */
function oneOf<K extends string>(args: Partial<Record<K, string>>, local: K, hosted: K): string {
  const [a, b] = [args[local], args[hosted]];
  if (a !== undefined && b !== undefined && a !== b) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `invalid arguments: ${local} and ${hosted} name the same thing (local and hosted form) and differ; pass one of them and call again`,
    );
  }
  const value = a ?? b;
  if (value === undefined) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `invalid arguments: ${local}: required (or ${hosted}, the hosted form); fix them and call again`,
    );
  }
  return value;
}
