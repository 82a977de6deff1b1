// Access profiles as data: which tool families (and single tools) each profile allows, and whether
// it is bound to one workspace. Every surface asks `allows(profile, tool)` or `checkAllowed`;
// nothing branches on names.
import { AfsError } from "../core/errors.js";

/** Tool families, as the MCP tool table tags its tools. */
export const TOOL_FAMILIES = [
  "status",
  "admin-read",
  "admin-write",
  "checkpoint-read",
  "checkpoint-write",
  "file-read",
  "file-write",
  "token",
] as const;
export type ToolFamily = (typeof TOOL_FAMILIES)[number];

export const PROFILES = ["workspace-ro", "workspace-rw", "workspace-rw-checkpoint", "admin-ro", "admin-rw"] as const;
export type Profile = (typeof PROFILES)[number];

export const DEFAULT_PROFILE: Profile = "workspace-rw";

export interface ProfileSpec {
  /** Workspace-bound profiles act on one workspace and need it before serving anything. */
  workspaceBound: boolean;
  families: readonly ToolFamily[];
  /** Single tools allowed beyond the families (admin-ro may list checkpoints, not create them). */
  tools: readonly string[];
  summary: string;
}

export const PROFILE_TABLE: Readonly<Record<Profile, ProfileSpec>> = {
  "workspace-ro": {
    workspaceBound: true,
    families: ["file-read"],
    tools: [],
    summary: "read-only file tools on one workspace",
  },
  "workspace-rw": {
    workspaceBound: true,
    families: ["file-read", "file-write"],
    tools: [],
    summary: "read and write file tools on one workspace (default)",
  },
  "workspace-rw-checkpoint": {
    workspaceBound: true,
    families: ["file-read", "file-write", "checkpoint-read", "checkpoint-write"],
    tools: [],
    summary: "read and write file tools plus checkpoint tools on one workspace",
  },
  "admin-ro": {
    workspaceBound: false,
    families: ["status", "admin-read", "file-read"],
    tools: ["checkpoint_list"],
    summary: "status and workspace listing, read-only file tools, checkpoint_list",
  },
  "admin-rw": {
    workspaceBound: false,
    families: [...TOOL_FAMILIES],
    tools: [],
    summary: "everything",
  },
};

export const isProfile = (name: string): name is Profile => (PROFILES as readonly string[]).includes(name);

/** A profile named by a user (flag, token request), or INVALID_ARGUMENT listing the choices. */
export function parseProfile(name: string): Profile {
  if (isProfile(name)) return name;
  throw new AfsError(
    "INVALID_ARGUMENT",
    `unknown profile ${JSON.stringify(name)}; choose one of ${PROFILES.join(", ")}`,
  );
}

export function allows(profile: Profile, tool: { name: string; family: ToolFamily }): boolean {
  const spec = PROFILE_TABLE[profile];
  return spec.families.includes(tool.family) || spec.tools.includes(tool.name);
}

/** Refuses a tool the profile does not allow with PERMISSION_DENIED naming the profiles that do. */
export function checkAllowed(profile: Profile, tool: { name: string; family: ToolFamily }): void {
  if (allows(profile, tool)) return;
  const granting = PROFILES.filter((p) => allows(p, tool));
  throw new AfsError(
    "PERMISSION_DENIED",
    `${tool.name} is not available with profile ${profile}; it needs profile ${granting.join(" or ")}`,
    { tool: tool.name, profile },
  );
}
