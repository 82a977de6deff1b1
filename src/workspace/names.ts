// Names people and agents choose: workspaces, checkpoints and template slugs share one rule.
// Also a workspace's id, the other way to name it.
import { basename } from "node:path";
import { AfsError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import type { WorkspaceRecord } from "../store/store.js";

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_NAME = 128;

export function checkName(kind: "workspace" | "checkpoint" | "template", name: string): string {
  if (typeof name !== "string" || !NAME_PATTERN.test(name) || name.length > MAX_NAME) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `invalid ${kind} name ${JSON.stringify(name)}: use letters, digits, ".", "_" and "-", starting with a letter or digit (at most ${MAX_NAME} characters)`,
      { [kind]: name },
    );
  }
  return name;
}

/** A valid workspace name from a directory's base name (what `afs acp` names a new one): other characters become "-". */
export function workspaceNameFor(dir: string): string {
  const name = basename(dir)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, MAX_NAME);
  return NAME_PATTERN.test(name) ? name : "workspace";
}

/**
 * A workspace's id: stable while it lives, different for a later workspace of the same name (it
 * hashes the name with the creation time), and the same in every store it is migrated to.
 */
export const workspaceId = (ws: Pick<WorkspaceRecord, "name" | "createdAt">): string =>
  `ws_${sha256(`${ws.name}\n${ws.createdAt}`).slice(0, 20)}`;
