// The broker's roots: a local directory (served by LocalDirVolume, which also confines its paths)
// or an afs workspace, each with the name roots/list gives it, its URI, and whether it is
// read-only. Parses the "DIR[:ro]" and "afs:NAME[:ro]" spellings the command line and the library
// share.
import { realpath } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AfsError } from "../../core/errors.js";
import { LocalDirVolume } from "../../volume/local-dir/local-dir-volume.js";
import type { Volume } from "../../volume/volume.js";
import type { Afs } from "../../workspace/afs.js";

export interface RootSpec {
  /** The name roots/list gives it and root-relative paths start with; default the directory's or workspace's name. */
  name?: string;
  dir?: string;
  workspace?: string;
  readOnly?: boolean;
}

export interface BrokerRoot {
  name: string;
  /** file:// for a directory; afs://workspace/NAME for a workspace. */
  uri: string;
  readOnly: boolean;
  volume: Volume;
  /**
   * The host directory behind the root (as given, and its real path), when there is one; its
   * volume (a LocalDirVolume) then confines paths (Volume.realPath).
   */
  dir: string | null;
  real: string | null;
  workspace: string | null;
  /**
   * The volume a server's changes go through: on a stored workspace one that records the server's
   * name as the actor (surface broker), so history says which server made each change; elsewhere
   * the root's own (a directory's watches read that volume's log).
   */
  writerFor(server: string): Promise<Volume>;
}

/** "DIR", "DIR:ro", "afs:NAME", "afs:NAME:ro". */
export function parseRootSpec(text: string): RootSpec {
  let rest = text;
  let readOnly = false;
  if (rest.endsWith(":ro")) {
    readOnly = true;
    rest = rest.slice(0, -3);
  } else if (rest.endsWith(":rw")) rest = rest.slice(0, -3);
  if (rest === "")
    throw new AfsError("INVALID_ARGUMENT", `root ${JSON.stringify(text)} names nothing; use DIR[:ro] or afs:NAME[:ro]`);
  if (rest.startsWith("afs:")) return { workspace: rest.slice(4), readOnly };
  return { dir: rest, readOnly };
}

const NAME = /^[^/\\\0]+$/;

export async function openRoot(spec: RootSpec, afs: Afs | undefined, taken: ReadonlySet<string>): Promise<BrokerRoot> {
  const readOnly = spec.readOnly === true;
  if ((spec.dir === undefined) === (spec.workspace === undefined)) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "a root is either a directory (dir) or a workspace (workspace), not both or neither",
    );
  }
  let root: Omit<BrokerRoot, "name">;
  let base: string;
  if (spec.dir !== undefined) {
    const dir = resolve(spec.dir);
    const real = await realpath(dir).catch(() => {
      throw new AfsError("NOT_FOUND", `root directory ${dir} does not exist`, { dir });
    });
    const volume = await LocalDirVolume.open(dir, { actor: "broker", surface: "broker" });
    root = {
      writerFor: async () => volume,
      uri: pathToFileURL(dir).href,
      readOnly,
      volume,
      dir,
      real,
      workspace: null,
    };
    base = basename(dir) || "root";
  } else {
    const ws = spec.workspace as string;
    if (!afs) throw new AfsError("INVALID_ARGUMENT", `root afs:${ws} needs an afs home; open the broker with one`);
    const volume = await afs.workspaces.volume(ws, "broker", "broker");
    const writers = new Map<string, Promise<Volume>>();
    const writerFor = (server: string): Promise<Volume> => {
      let writer = writers.get(server);
      if (!writer) {
        writer = afs.workspaces.volume(ws, server, "broker");
        writers.set(server, writer);
        writer.catch(() => writers.delete(server));
      }
      return writer;
    };
    root = {
      writerFor,
      uri: `afs://workspace/${encodeURIComponent(ws)}`,
      readOnly,
      volume,
      dir: null,
      real: null,
      workspace: ws,
    };
    base = ws;
  }
  let name = spec.name ?? base;
  if (!NAME.test(name) || name === "." || name === "..") {
    throw new AfsError("INVALID_ARGUMENT", `root name ${JSON.stringify(name)} must be one path segment`);
  }
  if (spec.name !== undefined && taken.has(name)) {
    throw new AfsError("ALREADY_EXISTS", `a root named ${name} already exists; choose another name`);
  }
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
  return { ...root, name };
}
