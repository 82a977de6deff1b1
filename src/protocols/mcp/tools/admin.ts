// Status and workspace lifecycle tools: afs_status (stdio), workspace_list/create/fork, and the
// HTTP control plane's workspace_get/delete.
import { z } from "zod";
import type { WorkspaceInfo } from "../../../workspace/context.js";
import { workspaceInfo } from "../schemas.js";
import { ADDITIVE, defineTool, READ, type Tool } from "../tool.js";

const workspaceName = z.string().min(1);

/** A workspace as create, fork and get report it: its fields, with `workspace` for its name. */
const workspaceResult = workspaceInfo.omit({ name: true }).extend({ workspace: z.string() });
const asResult = ({ name, ...rest }: WorkspaceInfo) => ({ workspace: name, ...rest });

const describe = (r: z.infer<typeof workspaceResult>): string =>
  `workspace ${r.workspace}: head ${r.head}, revision ${r.revision}${r.dirty ? ", live changes not yet checkpointed" : ""}`;

export const adminTools: readonly Tool[] = [
  defineTool({
    name: "afs_status",
    title: "afs status",
    family: "status",
    description:
      "Show the local afs setup: version, data directory (AFS_HOME), store, the current workspace, this session's workspace and profile.",
    input: z.strictObject({}),
    output: z.object({
      version: z.string(),
      home: z.string(),
      store: z.string(),
      current_workspace: z.string().nullable(),
      workspaces: z.number(),
      session_workspace: z.string().nullable(),
      profile: z.string(),
    }),
    annotations: READ,
    transports: ["stdio"],
    async run(ctx) {
      return { ...(await ctx.afs.status()), session_workspace: ctx.workspace, profile: ctx.profile };
    },
    text: (r) =>
      [
        `afs ${r.version}`,
        `home       ${r.home}`,
        `store      ${r.store}`,
        `current    ${r.current_workspace ?? "-"}`,
        `session    ${r.session_workspace ?? "-"} (profile ${r.profile})`,
        `workspaces ${r.workspaces}`,
      ].join("\n"),
  }),

  defineTool({
    name: "workspace_list",
    title: "List workspaces",
    family: "admin-read",
    description:
      "List the workspaces: name, description, head checkpoint, and whether the live state has uncheckpointed changes.",
    input: z.strictObject({}),
    output: z.object({ workspaces: z.array(workspaceInfo), current: z.string().nullable() }),
    annotations: READ,
    async run(ctx) {
      const [workspaces, current] = await Promise.all([ctx.afs.listWorkspaces(), ctx.afs.currentWorkspace()]);
      return { workspaces, current };
    },
    text: (r) =>
      r.workspaces.length === 0
        ? "no workspaces yet; create one with workspace_create"
        : r.workspaces
            .map((w) => `${w.name === r.current ? "*" : " "} ${w.name}  head ${w.head}${w.dirty ? " (dirty)" : ""}`)
            .join("\n"),
  }),

  defineTool({
    name: "workspace_create",
    title: "Create a workspace",
    family: "admin-write",
    description: "Create an empty workspace. With set_current it also becomes the current workspace of this afs home.",
    input: z.strictObject({
      workspace: workspaceName.describe("Name of the new workspace."),
      description: z.string().optional().describe("What the workspace is for."),
      set_current: z.boolean().optional().describe("Also make it the current workspace."),
    }),
    output: workspaceResult.extend({ current: z.boolean() }),
    annotations: ADDITIVE,
    async run(ctx, args) {
      const info = await ctx.afs.createWorkspace(args.workspace, { description: args.description });
      if (args.set_current) await ctx.afs.useWorkspace(args.workspace);
      return { ...asResult(info), current: args.set_current === true };
    },
    text: (r) => `created ${describe(r)}${r.current ? "; it is now the current workspace" : ""}`,
  }),

  defineTool({
    name: "workspace_fork",
    title: "Fork a workspace",
    family: "admin-write",
    description:
      "Fork a workspace into a new one that starts from the source's live state (uncheckpointed changes included), for a second line of work. The source is not changed.",
    input: z.strictObject({
      workspace: workspaceName.describe("Source workspace."),
      new_workspace: workspaceName.describe("Name of the new workspace."),
    }),
    output: workspaceResult.extend({ source: z.string() }),
    annotations: ADDITIVE,
    async run(ctx, args) {
      const info = await ctx.afs.forkWorkspace(args.workspace, args.new_workspace);
      return { ...asResult(info), source: args.workspace };
    },
    text: (r) => `forked ${r.source} into ${describe(r)}`,
  }),

  defineTool({
    name: "workspace_get",
    title: "Get a workspace",
    family: "admin-read",
    description:
      "Show one workspace: description, head checkpoint, revision, and whether it has uncheckpointed changes.",
    input: z.strictObject({ workspace: workspaceName.describe("Workspace name.") }),
    output: workspaceResult,
    annotations: READ,
    transports: ["http"],
    run: async (ctx, args) => asResult(await ctx.afs.getWorkspace(args.workspace)),
    text: describe,
  }),

  defineTool({
    name: "workspace_delete",
    title: "Delete a workspace",
    family: "admin-write",
    description: "Delete a workspace with all its checkpoints. This cannot be undone.",
    input: z.strictObject({ workspace: workspaceName.describe("Workspace name.") }),
    output: z.object({ workspace: z.string(), deleted: z.boolean() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    transports: ["http"],
    async run(ctx, args) {
      await ctx.afs.deleteWorkspace(args.workspace);
      return { workspace: args.workspace, deleted: true };
    },
    text: (r) => `deleted workspace ${r.workspace}`,
  }),
];
