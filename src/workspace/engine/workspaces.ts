// `afs.workspaces`: create (empty, from a template, by fork or import), find, list, delete and
// export workspaces; which one is current; and a workspace as the Volume operations run on.
import { realpath } from "node:fs/promises";
import { AfsError } from "../../core/errors.js";
import { makeDirectory } from "../../store/make-dir.js";
import type { Volume } from "../../volume/volume.js";
import { getCheckpoint, keepRoot } from "../checkpoints.js";
import { readConfig, writeConfig } from "../config.js";
import { type CheckpointInfo, type WorkspaceInfo, workspaceInfo } from "../info.js";
import { checkName } from "../names.js";
import { notFoundWorkspace } from "../snapshot.js";
import { findWorkspace, setTemplate, templateSlugs, templateSource } from "../templates.js";
import type { ImportOptions, Progress } from "../transfer.js";
import { EMPTY_TREE } from "../tree.js";
import { WorkspaceVolume } from "../workspace-volume.js";
import {
  createWithRoot,
  describe,
  type Engine,
  type ImportResult,
  importWorkspace,
  liveRoot,
  requireWorkspace,
} from "./engine.js";

export interface ExportResult {
  files: number;
  bytes: number;
  /** With force: files and symlinks written, and entries removed. */
  written?: number;
  removed?: number;
  /** With force: the checkpoint that keeps what the directory held (null: a checkpoint already had it). */
  safety?: CheckpointInfo | null;
}

export class Workspaces {
  constructor(private readonly engine: Engine) {}

  // --- the current workspace -------------------------------------------------------------

  async current(): Promise<string | null> {
    return (await readConfig(this.engine.home)).current_workspace ?? null;
  }

  async use(name: string): Promise<WorkspaceInfo> {
    const info = await this.get(name);
    await writeConfig(this.engine.home, { ...(await readConfig(this.engine.home)), current_workspace: name });
    return info;
  }

  /** The named workspace, else the current one, else a clear error saying how to pick one. */
  async resolve(name?: string): Promise<string> {
    const chosen = name ?? this.engine.settings.workspace ?? (await this.current());
    if (!chosen) {
      throw new AfsError("INVALID_ARGUMENT", "no workspace given; pass -w NAME or choose one with: afs ws use NAME");
    }
    return chosen;
  }

  // --- workspaces --------------------------------------------------------------------------

  /**
   * An empty workspace, or with `template` one that starts from what that template holds now, its
   * live state, like a fork: the template's overlay folded (O(changes)), a `fork` checkpoint
   * naming the template as its start.
   */
  async create(name: string, options: { description?: string; template?: string } = {}): Promise<WorkspaceInfo> {
    if (options.template === undefined) {
      return createWithRoot(this.engine, name, EMPTY_TREE, {
        kind: "initial",
        parent: null,
        description: options.description,
      });
    }
    checkName("workspace", name);
    const source = await templateSource(this.engine, options.template);
    const { root, head } = await liveRoot(this.engine, source.workspace);
    // The head checkpoint's tree when the template has no live changes; say so when it has.
    const at =
      head === source.head.id && root === source.head.root
        ? `checkpoint ${source.head.name}`
        : `live state after checkpoint ${(await this.engine.store.getCheckpointById(head))?.name ?? head}`;
    const origin = `from template ${options.template} (workspace ${source.workspace}, ${at})`;
    return createWithRoot(this.engine, name, root, {
      kind: "fork",
      parent: head,
      description: origin,
      workspaceDescription: options.description ?? origin,
    });
  }

  async list(): Promise<WorkspaceInfo[]> {
    const [all, templates] = await Promise.all([this.engine.store.listWorkspaces(), templateSlugs(this.engine)]);
    return Promise.all(all.map((ws) => workspaceInfo(this.engine, ws, templates.get(ws.name) ?? null)));
  }

  async get(name: string): Promise<WorkspaceInfo> {
    return describe(this.engine, await requireWorkspace(this.engine, name));
  }

  /** A workspace named by its name or its id (the hosted control plane takes either). */
  async find(ref: string): Promise<WorkspaceInfo> {
    return describe(this.engine, await findWorkspace(this.engine, ref));
  }

  /** Offers a workspace as a template under `slug` (replacing any slug it had), or withdraws it (null). */
  async setTemplate(name: string, slug: string | null): Promise<WorkspaceInfo> {
    await setTemplate(this.engine, name, slug);
    return this.get(name);
  }

  /** A new workspace starting from the source's live state (its uncommitted changes included). */
  /** A new workspace starting from the source's live state, or from one of its checkpoints. */
  async fork(
    source: string,
    name: string,
    options: { description?: string; checkpoint?: string } = {},
  ): Promise<WorkspaceInfo> {
    checkName("workspace", name);
    const { root, head } =
      options.checkpoint === undefined
        ? await liveRoot(this.engine, source)
        : await getCheckpoint(this.engine, source, options.checkpoint).then((cp) => ({ root: cp.root, head: cp.id }));
    const from = options.checkpoint === undefined ? source : `${source} at ${options.checkpoint}`;
    return createWithRoot(this.engine, name, root, {
      kind: "fork",
      parent: head,
      description: options.description ?? `fork of ${from}`,
    });
  }

  async delete(name: string): Promise<void> {
    const { home, store } = this.engine;
    if (!(await store.deleteWorkspace(name))) throw notFoundWorkspace(name);
    if ((await this.current()) === name) {
      const { current_workspace: _, ...rest } = await readConfig(home);
      await writeConfig(home, rest);
    }
  }

  /** A new workspace holding what a directory holds. */
  import(name: string, dir: string, options: { description?: string } & ImportOptions = {}): Promise<ImportResult> {
    return importWorkspace(this.engine, name, dir, options);
  }

  /**
   * Exports a checkpoint (or, without one, the live state) into an empty directory. With `force`
   * the directory may hold anything: what it holds is first kept as a safety checkpoint (when no
   * checkpoint has it yet), then it is made equal to the export (ignored files stay). A mounted
   * directory is no exception: its sync then uploads what the export changed.
   */
  async export(
    name: string,
    dir: string,
    options: { checkpoint?: string; force?: boolean; onProgress?: Progress } = {},
  ): Promise<ExportResult> {
    const engine = this.engine;
    if (!options.force) {
      const root = options.checkpoint
        ? (await getCheckpoint(engine, name, options.checkpoint)).root
        : (await liveRoot(engine, name)).root;
      const { exportTree } = await import("../transfer.js");
      return exportTree(engine.store, root, dir, options.onProgress);
    }
    const target = options.checkpoint ? await getCheckpoint(engine, name, options.checkpoint) : null;
    makeDirectory(dir, "the export");
    const real = await realpath(dir);
    const what = target ? `checkpoint ${target.name}` : "the live state";
    const safety = await this.keepDirectory(name, real, `${real} before exporting ${what}`);
    const root = target?.root ?? (await liveRoot(engine, name)).root;
    const { syncTree } = await import("../sync-dir.js");
    const synced = await syncTree(engine.store, engine.trees, root, real);
    return { files: synced.files, bytes: synced.bytes, written: synced.written, removed: synced.removed, safety };
  }

  /** Records what a directory holds as a safety checkpoint of `name`, head unmoved (null: nothing to keep). */
  private async keepDirectory(name: string, dir: string, description: string): Promise<CheckpointInfo | null> {
    const { importTree } = await import("../transfer.js");
    const { root } = await importTree(this.engine.store, dir, {}, this.engine.settings.env);
    return root === EMPTY_TREE ? null : keepRoot(this.engine, name, root, description);
  }

  /** The workspace as a Volume: its live state in the store, changes recorded as `actor` through `surface`. */
  async volume(name: string, actor = this.engine.actor, surface = this.engine.surface): Promise<Volume> {
    const engine = this.engine;
    await requireWorkspace(engine, name);
    return new WorkspaceVolume(engine.store, engine.trees, engine.roots, engine.caches, name, actor, surface);
  }
}
