// What every resource function takes and checks first: the session (engine, profile, workspace
// binding, limits), whether its profile may read files at all, and which workspace a URI may reach.
import { leavesPin, type WorkspaceBinding } from "../../../access/binding.js";
import type { Limits } from "../../../access/limits.js";
import { checkAllowed, type Profile } from "../../../access/profiles.js";
import { AfsError } from "../../../core/errors.js";
import type { Afs } from "../../../workspace/afs.js";
import { parseResourceUri, type ResourceAddress } from "./uri.js";

/** A session as the resource functions see it; a tool session's ToolContext is one. */
export interface ResourceContext extends WorkspaceBinding {
  afs: Afs;
  profile: Profile;
  limits: Limits;
}

/** Resources are file reads: a profile lists and reads them exactly when it may use the file-read tools. */
export const RESOURCE_ACCESS = { name: "resources/read", family: "file-read" } as const;

/**
 * Freshness hints as data (2026-07-28's `ttlMs` / `cacheScope`); a revision layer that speaks them
 * attaches them to its result, an older one leaves them off.
 */
export interface CacheHint {
  ttlMs: number;
  cacheScope: "private" | "public";
}

export const CACHE = {
  /** The templates are the same for every caller and every release of this server. */
  templates: { ttlMs: 3_600_000, cacheScope: "public" },
  /** Live files change under any writer: always re-ask (or subscribe). */
  live: { ttlMs: 0, cacheScope: "private" },
  /** A checkpoint never changes; private because what a token may read is its own. */
  checkpoint: { ttlMs: 86_400_000, cacheScope: "private" },
} as const satisfies Record<string, CacheHint>;

/**
 * The address a URI names, once the session may read it: PERMISSION_DENIED for a profile without
 * file reads or a workspace other than the one a token is pinned to (as for a tool's workspace
 * argument); the workspace's existence is checked by whoever opens it.
 */
export async function authorize(ctx: ResourceContext, uri: string): Promise<ResourceAddress> {
  checkAllowed(ctx.profile, RESOURCE_ACCESS);
  const address = parseResourceUri(uri);
  if (leavesPin(ctx, address.workspace)) {
    throw new AfsError(
      "PERMISSION_DENIED",
      `this session may only use workspace ${ctx.workspace}; its files are afs://${ctx.workspace}/PATH`,
      { uri, workspace: address.workspace },
    );
  }
  return address;
}

/**
 * The workspace `resources/list` lists: the session's, else (an unbound admin session) the current
 * workspace at the time, as tools fall back to it; null when there is none, which lists nothing.
 */
export async function listedWorkspace(ctx: ResourceContext): Promise<string | null> {
  checkAllowed(ctx.profile, RESOURCE_ACCESS);
  return ctx.workspace ?? (await ctx.afs.workspaces.current());
}
