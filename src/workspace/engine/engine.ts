// What the engine's parts share (the store, caches, the search files, who acts) and the steps
// several parts take: find a workspace, fold its live state, create one from a root tree, import a
// directory. Internal to workspace/: surfaces only see the parts.
import { randomUUID } from "node:crypto";
import { AfsError } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import { KeyedLock } from "../../core/keyed-lock.js";
import { keptChanging, RETRY, retryOnConflict } from "../../core/retry.js";
import type { Settings } from "../../core/settings.js";
import type { CheckpointRecord, Store, WorkspaceRecord } from "../../store/store.js";
import { BlobCache } from "../blob-cache.js";
import { fold } from "../fold.js";
import { type WorkspaceInfo, workspaceInfo } from "../info.js";
import { SubtreeListings } from "../listings.js";
import { checkName } from "../names.js";
import { type EngineContext, notFoundWorkspace, snapshot } from "../snapshot.js";
import { templateSlugs } from "../templates.js";
import type { ImportOptions, SkippedFile } from "../transfer.js";
import { TreeReader, TreeWriter } from "../tree.js";
import { SearchFiles } from "./search-files.js";

export interface Engine extends EngineContext {
  readonly home: string;
  /**
   * Shared by every volume of this home: walk listings of unchanged subtrees, and small contents
   * recently read (both keyed by hash, so never stale).
   */
  readonly caches: { listings: SubtreeListings; blobs: BlobCache; writers: KeyedLock };
  readonly search: SearchFiles;
  /** What this engine read from its environment when it opened; nothing below reads process.env. */
  readonly settings: Settings;
  /** The directory it was opened from: where relative paths given to it later are taken from. */
  readonly cwd: string;
}

export function createEngine(
  home: string,
  store: Store,
  who: { actor: string; surface: string },
  settings: Settings,
  cwd: string,
): Engine {
  return {
    home,
    store,
    actor: who.actor,
    surface: who.surface,
    trees: new TreeReader(store),
    roots: new Map(),
    caches: { listings: new SubtreeListings(), blobs: new BlobCache(), writers: new KeyedLock() },
    search: new SearchFiles(store, home, settings),
    settings,
    cwd,
  };
}

export async function requireWorkspace(engine: Engine, name: string): Promise<WorkspaceRecord> {
  const ws = await engine.store.getWorkspace(name);
  if (!ws) throw notFoundWorkspace(name);
  return ws;
}

export async function describe(engine: Engine, ws: WorkspaceRecord): Promise<WorkspaceInfo> {
  return workspaceInfo(engine, ws, (await templateSlugs(engine)).get(ws.name) ?? null);
}

/** The live state folded into trees (stored, unreferenced until a checkpoint uses them). */
export function liveRoot(engine: Engine, name: string): Promise<{ root: Hash; head: string }> {
  return retryOnConflict(
    async () => {
      const snap = await snapshot(engine, name);
      const rows = await engine.store.overlayUnder(name, "/");
      const writer = new TreeWriter();
      const root = await fold(snap.root, rows, engine.trees, writer);
      await writer.flush(engine.store);
      return (await snap.stillCurrent()) ? { root, head: snap.workspace.head } : RETRY;
    },
    { giveUp: keptChanging(name, "while its live state was read") },
  );
}

export async function createWithRoot(
  engine: Engine,
  name: string,
  root: Hash,
  from: {
    kind: CheckpointRecord["kind"];
    parent: string | null;
    description?: string | undefined;
    /** The workspace's own description when it differs from its first checkpoint's. */
    workspaceDescription?: string;
  },
): Promise<WorkspaceInfo> {
  checkName("workspace", name);
  const now = Date.now();
  const checkpoint: CheckpointRecord = {
    id: randomUUID(),
    workspace: name,
    name: from.kind,
    root,
    parent: from.parent,
    createdAt: now,
    actor: engine.actor,
    kind: from.kind,
    description: from.description ?? "",
  };
  const ws: WorkspaceRecord = {
    name,
    description: from.workspaceDescription ?? from.description ?? "",
    head: checkpoint.id,
    revision: 0,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await engine.store.createWorkspace(ws, checkpoint);
  } catch (e) {
    if (e instanceof AfsError && e.code === "ALREADY_EXISTS") throw alreadyExists(name);
    throw e;
  }
  // A new workspace is never a template yet.
  return workspaceInfo(engine, ws, null);
}

export interface ImportResult {
  workspace: WorkspaceInfo;
  files: number;
  bytes: number;
  skipped: SkippedFile[];
}

/** A new workspace holding what a directory holds. */
export async function importWorkspace(
  engine: Engine,
  name: string,
  dir: string,
  options: { description?: string } & ImportOptions = {},
): Promise<ImportResult> {
  checkName("workspace", name);
  if (await engine.store.getWorkspace(name)) throw alreadyExists(name);
  const { importTree } = await import("../transfer.js");
  const imported = await importTree(engine.store, dir, options, engine.settings.env);
  const workspace = await createWithRoot(engine, name, imported.root, {
    kind: "import",
    parent: null,
    description: options.description ?? `imported from ${dir}`,
  });
  return { workspace, files: imported.files, bytes: imported.bytes, skipped: imported.skipped };
}

export const alreadyExists = (name: string): AfsError =>
  new AfsError("ALREADY_EXISTS", `workspace ${name} already exists; pick another name or delete it first`, {
    workspace: name,
  });
