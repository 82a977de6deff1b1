// Templates: workspaces offered under a slug, from which a new workspace starts like a fork of
// the template's live state (workspaces.create folds it). Also how a workspace is found by name
// or by its id.
import { AfsError } from "../core/errors.js";
import type { CheckpointRecord, WorkspaceRecord } from "../store/store.js";
import { checkName, workspaceId } from "./names.js";
import { type EngineContext, notFoundWorkspace } from "./snapshot.js";

const ID_PATTERN = /^ws_[0-9a-f]{20}$/;

/** The workspace `ref` names, by name first, else by id; NOT_FOUND pointing at the listing. */
export async function findWorkspace(ctx: EngineContext, ref: string): Promise<WorkspaceRecord> {
  const byName = await ctx.store.getWorkspace(ref);
  if (byName) return byName;
  if (ID_PATTERN.test(ref)) {
    const byId = (await ctx.store.listWorkspaces()).find((ws) => workspaceId(ws) === ref);
    if (byId) return byId;
  }
  throw notFoundWorkspace(ref);
}

/** Workspace name → its template slug, for every template. */
export async function templateSlugs(ctx: EngineContext): Promise<Map<string, string>> {
  return new Map((await ctx.store.listTemplates()).map((t) => [t.workspace, t.slug]));
}

/** Offers a workspace as a template under `slug` (replacing its slug), or withdraws it (null). */
export async function setTemplate(ctx: EngineContext, workspace: string, slug: string | null): Promise<void> {
  if (slug !== null) checkName("template", slug);
  if (!(await ctx.store.getWorkspace(workspace))) throw notFoundWorkspace(workspace);
  try {
    await ctx.store.setTemplate(workspace, slug);
  } catch (e) {
    if (e instanceof AfsError && e.code === "NOT_FOUND") throw notFoundWorkspace(workspace);
    if (e instanceof AfsError && e.code === "ALREADY_EXISTS") {
      const holder = typeof e.details.workspace === "string" ? e.details.workspace : "another workspace";
      throw new AfsError(
        "ALREADY_EXISTS",
        `template slug ${slug} is taken by workspace ${holder}; choose another slug, or withdraw ${holder} first`,
        { slug, workspace: holder },
      );
    }
    throw e;
  }
}

/** What a new workspace starts from for `slug`: the template workspace and its head checkpoint. */
export async function templateSource(
  ctx: EngineContext,
  slug: string,
): Promise<{ workspace: string; head: CheckpointRecord }> {
  const found = (await ctx.store.listTemplates()).find((t) => t.slug === slug);
  const ws = found ? await ctx.store.getWorkspace(found.workspace) : null;
  if (!found || !ws) {
    throw new AfsError("NOT_FOUND", `template ${JSON.stringify(slug)} does not exist`, { slug }, "list-templates");
  }
  const head = await ctx.store.getCheckpointById(ws.head);
  if (!head) throw new AfsError("IO_ERROR", `workspace ${ws.name} has a missing head checkpoint; run afs fsck`);
  return { workspace: ws.name, head };
}
