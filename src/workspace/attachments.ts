// Which directory a workspace is attached to (its live state *is* that directory): a link that only
// makes sense on this machine, so it lives in the home's config file, not in the shared store.
import { realpath, stat } from "node:fs/promises";
import { basename } from "node:path";
import { AfsError } from "../core/errors.js";
import { readConfig, writeConfig } from "./config.js";
import { NAME_PATTERN } from "./names.js";

/** Workspace name → absolute real path of its directory. */
export async function attachments(home: string): Promise<Record<string, string>> {
  return (await readConfig(home)).attachments ?? {};
}

/** Links (or, with null, unlinks) a workspace and a directory; returns whether a link was removed. */
export async function setAttachment(home: string, workspace: string, dir: string | null): Promise<boolean> {
  const config = await readConfig(home);
  const { [workspace]: old, ...rest } = config.attachments ?? {};
  const next = dir === null ? rest : { ...rest, [workspace]: dir };
  const { attachments: _, ...others } = config;
  await writeConfig(home, Object.keys(next).length > 0 ? { ...others, attachments: next } : others);
  return old !== undefined;
}

/** The directory's real path (symlinks resolved), refusing anything that is not a directory. */
export async function realDirectory(dir: string): Promise<string> {
  const real = await realpath(dir).catch(() => {
    throw new AfsError("NOT_FOUND", `directory ${dir} does not exist; create it or pass an existing one`, { dir });
  });
  if (!(await stat(real)).isDirectory()) {
    throw new AfsError("INVALID_ARGUMENT", `${dir} is not a directory`, { dir });
  }
  return real;
}

/** A valid workspace name from a directory's base name: other characters become "-". */
export function workspaceNameFor(dir: string): string {
  const name = basename(dir)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 128);
  return NAME_PATTERN.test(name) ? name : "workspace";
}
