// Which workspace a session acts on, decided the same way for every face: once when the session
// starts (a flag, $AFS_WORKSPACE, the current workspace), then per call (an argument may name
// another workspace unless the session is pinned to its own).

import { AfsError, isAfsError } from "../core/errors.js";
import type { Env } from "../core/settings.js";
import type { Workspaces } from "../workspace/afs.js";
import { PROFILE_TABLE, type Profile } from "./profiles.js";

/** A session's workspace binding, as every face carries it. */
export interface WorkspaceBinding {
  /** The session's workspace; null when none was chosen (admin profiles). */
  workspace: string | null;
  /** A pinned workspace (an HTTP workspace token) may not be swapped for another by argument. */
  pinned: boolean;
}

export interface SessionRequest {
  profile: Profile;
  /** The workspace the user named (--workspace). */
  requested?: string | undefined;
  /**
   * Whether an unnamed workspace is taken from $AFS_WORKSPACE or the current one now (afs mcp).
   * Without it (afs serve, whose tokens carry their own workspace) the session starts with none
   * and each call falls back to the current workspace at that time.
   */
  fallback: boolean;
  /** The session's settings, for AFS_WORKSPACE (an engine's `settings.env`; default none). */
  env?: Env;
}

/**
 * The workspace a session starts bound to, checked to exist. Null when none was chosen and either
 * the profile is not workspace-bound or the face resolves the workspace per call.
 */
export async function bindSession(
  afs: { workspaces: Pick<Workspaces, "current" | "get"> },
  request: SessionRequest,
): Promise<string | null> {
  const env = request.env ?? {};
  const name = request.requested ?? (request.fallback ? (env.AFS_WORKSPACE ?? (await afs.workspaces.current())) : null);
  if (!name) {
    if (!request.fallback || !PROFILE_TABLE[request.profile].workspaceBound) return null;
    throw new AfsError(
      "INVALID_ARGUMENT",
      `profile ${request.profile} works on one workspace and none is chosen; pass --workspace NAME or choose one with: afs ws use NAME`,
    );
  }
  try {
    await afs.workspaces.get(name);
  } catch (e) {
    if (isAfsError(e) && e.code === "NOT_FOUND") {
      throw new AfsError("NOT_FOUND", `workspace ${name} does not exist; create it with: afs ws create ${name}`, {
        workspace: name,
      });
    }
    throw e;
  }
  return name;
}

/** Whether a call naming `requested` would leave the workspace its session is pinned to. */
export const leavesPin = (binding: WorkspaceBinding, requested: unknown): boolean =>
  binding.pinned && requested !== undefined && requested !== binding.workspace;

/**
 * The workspace one call acts on: the argument, else the session's, else the current one.
 * `hint` is a face's own pointer to workspace names, added to the message when none is chosen.
 */
export async function workspaceForCall(
  afs: { workspaces: Pick<Workspaces, "current"> },
  binding: WorkspaceBinding,
  requested: string | undefined,
  hint?: string,
): Promise<string> {
  if (leavesPin(binding, requested)) {
    throw new AfsError(
      "PERMISSION_DENIED",
      `this session may only use workspace ${binding.workspace}; omit workspace or pass ${JSON.stringify(binding.workspace)}`,
      { workspace: requested },
    );
  }
  const name = requested ?? binding.workspace ?? (await afs.workspaces.current());
  if (!name) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `no workspace chosen for this session; pass workspace${hint === undefined ? "" : ` (${hint})`}`,
    );
  }
  return name;
}
