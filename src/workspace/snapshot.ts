// A consistent view of one workspace at one revision: head tree plus live overlay, and path
// resolution through both. Mutations compute against a snapshot and commit with its revision.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { ancestors, ROOT, segments } from "../core/paths.js";
import type { Store, WorkspaceRecord } from "../store/store.js";
import type { TreeReader } from "./tree.js";

/** What the workspace engine's functions share: the store, the tree cache, and who is acting. */
export interface EngineContext {
  store: Store;
  trees: TreeReader;
  /** Checkpoint id → root tree (checkpoints are immutable). */
  roots: Map<string, Hash>;
  actor: string;
  /** Recorded beside the actor on every event: which way into afs the change came. */
  surface: string;
}

export const snapshot = (ctx: EngineContext, workspace: string): Promise<Snapshot> =>
  Snapshot.take(ctx.store, ctx.trees, workspace, ctx.roots);

/** The root directory as an entry; its hash is the tree the overlay is laid over. */
const rootEntry = (root: Hash, mtime: number): Entry => ({ kind: "dir", hash: root, size: 0, mode: 0o755, mtime });

export class Snapshot {
  private readonly rows = new Map<string, Entry | null>();
  private readonly fetched = new Set<string>();

  private constructor(
    private readonly store: Store,
    private readonly trees: TreeReader,
    readonly workspace: WorkspaceRecord,
    /** Root tree of the head checkpoint. */
    readonly root: Hash,
  ) {}

  get revision(): number {
    return this.workspace.revision;
  }

  static async take(store: Store, trees: TreeReader, name: string, roots: Map<string, Hash>): Promise<Snapshot> {
    const ws = await store.getWorkspace(name);
    if (!ws) throw notFoundWorkspace(name);
    let root = roots.get(ws.head);
    if (!root) {
      const cp = await store.getCheckpointById(ws.head);
      if (!cp) throw new AfsError("IO_ERROR", `workspace ${name} has a missing head checkpoint; run afs fsck`);
      root = cp.root;
      roots.set(ws.head, root);
    }
    return new Snapshot(store, trees, ws, root);
  }

  /** Fails with CONFLICT when the workspace moved since this snapshot (used to validate plain reads). */
  async stillCurrent(): Promise<boolean> {
    const ws = await this.store.getWorkspace(this.workspace.name);
    return !!ws && ws.revision === this.workspace.revision && ws.head === this.workspace.head;
  }

  /** Loads overlay rows for the given paths and all their ancestors in one store call. */
  async prefetch(paths: readonly string[]): Promise<void> {
    const want = new Set<string>();
    for (const p of paths) {
      for (const a of [...ancestors(p), p]) if (a !== ROOT && !this.fetched.has(a)) want.add(a);
    }
    if (want.size === 0) return;
    const found = await this.store.overlayGet(this.workspace.name, [...want]);
    for (const p of want) {
      this.fetched.add(p);
      if (found.has(p)) this.rows.set(p, found.get(p) ?? null);
    }
  }

  /** The entry at `path` in the live state, or null. A directory's hash is its base tree. */
  async resolve(path: string): Promise<Entry | null> {
    if (path === ROOT) return rootEntry(this.root, this.workspace.createdAt);
    await this.prefetch([path]);
    // The deepest overlay row at or above the path decides where the rest is looked up.
    const chain = [...ancestors(path), path];
    for (let i = chain.length - 1; i >= 1; i--) {
      const at = chain[i] as string;
      if (!this.rows.has(at)) continue;
      const row = this.rows.get(at) ?? null;
      if (at === path) return row;
      if (row?.kind !== "dir") return null;
      return this.trees.lookup(row.hash, segments(path).slice(segments(at).length));
    }
    return this.trees.lookup(this.root, segments(path));
  }

  /** Direct children of a directory in the live state (base tree merged with overlay rows). */
  async children(path: string, dir: Entry): Promise<Map<string, Entry>> {
    const merged = new Map(await this.trees.get(dir.hash));
    for (const row of await this.store.overlayUnder(this.workspace.name, path, true)) {
      const name = row.path.slice(path === ROOT ? 1 : path.length + 1);
      if (row.entry) merged.set(name, row.entry);
      else merged.delete(name);
    }
    return merged;
  }
}

export const notFoundWorkspace = (name: string): AfsError =>
  new AfsError("NOT_FOUND", `workspace ${JSON.stringify(name)} does not exist`, { workspace: name }, "list-workspaces");
