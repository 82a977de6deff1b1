// The versioned workspace as a Volume: reads resolve through the live overlay into the head tree;
// every mutation is computed against a snapshot and committed with that snapshot's revision, so
// concurrent writers (in this process or another) never lose each other's changes.
import { DIR_MODE, type Entry, FILE_MODE } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../core/hash.js";
import type { KeyedLock } from "../core/keyed-lock.js";
import { ancestors, baseName, isWithin, joinPath, parentOf, ROOT, rebase, segments } from "../core/paths.js";
import { RETRY, retryIfConflict, retryOnConflict, tooBusy } from "../core/retry.js";
import type { CheckpointRecord, EventInput, OverlayRow, Store } from "../store/store.js";
import {
  alreadyExists,
  changed,
  existingDirectory,
  isDirectory,
  moveIntoItself,
  nonEmptyDirectory,
  notADirectory,
  notADirectoryThere,
  notFound,
  targetExists,
} from "../volume/errors.js";
import type { MutationResult, OpenFile, Stat, Volume, WriteOptions } from "../volume/volume.js";
import type { BlobCache } from "./blob-cache.js";
import { openBlob } from "./blob-file.js";
import type { SubtreeListings } from "./listings.js";
import { Snapshot } from "./snapshot.js";
import { filesOf, liveFilesUnder } from "./subtree-files.js";
import { EMPTY_TREE, type TreeReader } from "./tree.js";
import { cachedBlob, followSymlinks, type OpenDir, plainStat, statOf, streamWalk } from "./tree-reads.js";

/** How many checkpoints before the head priorBase looks at (the index keeps the maps of four trees). */
const PRIOR_CHECKPOINTS = 8;
/** Past this many changes since an earlier checkpoint, its map saves little over listing the tree. */
const PRIOR_MAX_CHANGES = 5_000;

/** What a walk starts from: see planWalk. */
interface WalkPlan {
  top: Entry;
  rowsByDir: ReadonlyMap<string, OverlayRow[]>;
  dirty: ReadonlySet<string>;
  whole: boolean;
}

interface Planned {
  set: OverlayRow[];
  events: Omit<EventInput, "actor" | "surface">[];
  clearUnder?: string[];
  result: Omit<MutationResult, "revision">;
}

export class WorkspaceVolume implements Volume {
  readonly label: string;

  constructor(
    private readonly store: Store,
    private readonly trees: TreeReader,
    private readonly roots: Map<string, Hash>,
    private readonly caches: { listings: SubtreeListings; blobs: BlobCache; writers: KeyedLock },
    readonly workspace: string,
    private readonly actor: string,
    private readonly surface: string,
  ) {
    this.label = `workspace ${workspace}`;
  }

  /**
   * A snapshot whose reads are known to be consistent (no commit landed while it was read). A read
   * that saw a commit land is tried again under the writers' policy: paused, within a time budget.
   */
  private read<T>(fn: (snap: Snapshot) => Promise<T>): Promise<T> {
    return retryOnConflict(
      async () => {
        const snap = await Snapshot.take(this.store, this.trees, this.workspace, this.roots);
        let value: T;
        try {
          value = await fn(snap);
        } catch (e) {
          // A read that met a commit halfway (a checkpoint's new head with the overlay it cleared
          // read before, say) may find a file missing that is there: only a current snapshot's error stands.
          if (!(await snap.stillCurrent())) return RETRY;
          throw e;
        }
        return (await snap.stillCurrent()) ? value : RETRY;
      },
      { giveUp: tooBusy(this.workspace) },
    );
  }

  async stat(path: string): Promise<Stat | null> {
    return this.read(async (snap) => {
      const entry = await snap.resolve(path);
      return entry ? await this.toStat(path, entry) : null;
    });
  }

  async readFile(path: string): Promise<Buffer> {
    const hash = await this.read(async (snap) => {
      const { entry } = await this.follow(snap, path);
      if (entry.kind === "dir") throw isDirectory(path);
      return entry.hash;
    });
    return this.blob(hash);
  }

  async openFile(path: string): Promise<OpenFile> {
    const entry = await this.read(async (snap) => {
      const { entry } = await this.follow(snap, path);
      if (entry.kind === "dir") throw isDirectory(path);
      return entry;
    });
    return openBlob(this.store, entry.hash, entry.size);
  }

  /** The bytes of the file a stat of this volume describes, by its content hash: no second path resolution. */
  async readContent(stat: Stat): Promise<Buffer> {
    if (stat.kind !== "file" || !stat.sha256) return this.readFile(stat.path);
    return this.blob(stat.sha256);
  }

  async list(path: string): Promise<Stat[]> {
    return this.read(async (snap) => {
      const dir = await snap.resolve(path);
      if (!dir) throw notFound(path);
      if (dir.kind !== "dir") throw notADirectory(path);
      const children = await snap.children(path, dir);
      return Promise.all([...children].map(([name, e]) => this.toStat(joinPath(path, name), e)));
    });
  }

  /**
   * Streamed depth first, in name order: only the directories along the way are held, so a walk of a
   * million files (a glob, an export) costs no more memory than one of a thousand. A listing a
   * warm process already keeps (walkList) is reused instead.
   */
  async *walk(path: string, maxDepth = Number.POSITIVE_INFINITY): AsyncIterable<Stat> {
    const plan = await this.planWalk(path, maxDepth);
    if (!plan) return;
    if ("kept" in plan) {
      yield* plan.kept;
      return;
    }
    // Each tree is read once and not kept: a walk of a whole large tree would only flush the cache.
    const open = (dir: string, entry: Entry) => this.merged(dir, entry, plan.rowsByDir, false);
    yield* streamWalk(path, plan.top, maxDepth, open, (hash) => this.blob(hash));
  }

  /** A subtree without live rows lists as the same array each time: the one SubtreeListings keeps. */
  walkList(path: string): Promise<readonly Stat[]> {
    return this.listBelow(path, Number.POSITIVE_INFINITY);
  }

  async storedBase(path: string): Promise<{ tree: Hash; changed: string[] } | null> {
    return this.read(async (snap) => {
      const top = await snap.resolve(path);
      if (top?.kind !== "dir") return null;
      // As listBelow merges them: the live rows below `path` over the tree of its entry.
      return { tree: top.hash, changed: await this.liveBelow(path) };
    });
  }

  async priorBase(
    path: string,
    mapped: (tree: Hash) => boolean,
  ): Promise<{ tree: Hash; under: string; changed: string[] } | null> {
    return this.read(async (snap) => {
      const top = await snap.resolve(path);
      if (top?.kind !== "dir") return null;
      // `path` itself first, then the directories above it: a map of an enclosing tree (the
      // builder maps roots) holds the files below `path` too.
      const enclosing = [path, ...ancestors(path).reverse()];
      let cp: CheckpointRecord | null = await this.store.getCheckpointById(snap.workspace.head);
      for (let i = 0; i <= PRIOR_CHECKPOINTS && cp; i++) {
        for (const dir of enclosing) {
          const entry = dir === ROOT ? { kind: "dir", hash: cp.root } : await this.trees.lookup(cp.root, segments(dir));
          if (entry?.kind !== "dir" || !mapped(entry.hash)) continue;
          const changed = await this.changedSince(cp, path, top.hash);
          if (changed === null) return null;
          return { tree: entry.hash, under: dir === ROOT ? path.slice(1) : path.slice(dir.length + 1), changed };
        }
        cp = cp.parent ? await this.store.getCheckpointById(cp.parent) : null;
      }
      return null;
    });
  }

  /** The paths of the live rows below `path`. */
  private async liveBelow(path: string): Promise<string[]> {
    return (await this.store.overlayUnder(this.workspace, path)).map((r) => r.path).filter((p) => p !== path);
  }

  /**
   * What is different below `path` between checkpoint `cp` and the live state (whose stored tree
   * there is `tree`): the live rows, and what changed between the trees (a Merkle diff, O(changes)).
   * Null past PRIOR_MAX_CHANGES.
   */
  private async changedSince(cp: CheckpointRecord, path: string, tree: Hash): Promise<string[] | null> {
    const rows = await this.liveBelow(path);
    // What `path` was then: a tree, or nothing (missing, or a file or symlink then: all below it is new).
    const was = path === ROOT ? null : await this.trees.lookup(cp.root, segments(path));
    const then = path === ROOT ? cp.root : was?.kind === "dir" ? was.hash : null;
    if (then === tree) return rows;
    // Loaded here: the diff module brings the diff library, which most commands never need.
    const { listChanges } = await import("./diff.js");
    const changes = await listChanges(this.trees, then, tree);
    if (changes.length > PRIOR_MAX_CHANGES) return null;
    const under = (p: string): string => (path === ROOT ? p : `${path}${p}`);
    return [
      ...rows,
      ...changes.flatMap((c) => (c.old_path === undefined ? [c.path] : [c.path, c.old_path])).map(under),
    ];
  }

  /**
   * What a walk below `path` starts from, read in one consistent pass: the live rows below it
   * grouped by directory (each directory merges only its own), and the directories with live rows at
   * or below them (every other subtree lists as its stored tree does). Stored trees never change, so
   * once this pass is known consistent the trees can be read at leisure. A kept listing of the whole
   * subtree is returned as is; null when `path` is not a directory.
   */
  private planWalk(path: string, maxDepth: number): Promise<WalkPlan | { kept: readonly Stat[] } | null> {
    return this.read(async (snap) => {
      const top = await snap.resolve(path);
      if (!top) throw notFound(path);
      if (top.kind !== "dir") return null;
      const rowsByDir = new Map<string, OverlayRow[]>();
      for (const row of await this.store.overlayUnder(this.workspace, path)) {
        const dir = parentOf(row.path);
        const list = rowsByDir.get(dir);
        if (list) list.push(row);
        else rowsByDir.set(dir, [row]);
      }
      const dirty = new Set<string>();
      for (const dir of rowsByDir.keys()) {
        for (let d = dir; !dirty.has(d); d = parentOf(d)) {
          dirty.add(d);
          if (d === path) break;
        }
      }
      const whole = maxDepth === Number.POSITIVE_INFINITY;
      const hit = whole && !dirty.has(path) ? this.caches.listings.get(path, top.hash) : undefined;
      return hit ? { kept: hit } : { top, rowsByDir, dirty, whole };
    });
  }

  /** A directory's entries: its stored tree (already in name order), with its own live rows merged in. */
  private async merged(
    dir: string,
    base: Entry,
    rowsByDir: ReadonlyMap<string, OverlayRow[]>,
    keep = true,
  ): Promise<OpenDir> {
    const stored: ReadonlyMap<string, Entry> = await this.trees.get(base.hash, { keep });
    const rows = rowsByDir.get(dir);
    if (!rows) return { tree: stored, names: stored.keys() };
    const copy = new Map(stored);
    for (const row of rows) {
      const name = baseName(row.path);
      if (row.entry) copy.set(name, row.entry);
      else copy.delete(name);
    }
    return { tree: copy, names: [...copy.keys()].sort() };
  }

  /** The whole listing below `path` as one array, kept per clean subtree (SubtreeListings) and reused. */
  private async listBelow(path: string, maxDepth: number): Promise<readonly Stat[]> {
    const plan = await this.planWalk(path, maxDepth);
    if (!plan) return [];
    if ("kept" in plan) return plan.kept;
    const { top, rowsByDir, dirty, whole } = plan;
    // Each directory appends to one array, and a reusable subtree keeps a slice of it: nesting
    // copies of every subtree's listing into its parent's cost a new process more than the walk.
    const list = async (dir: string, base: Entry, depth: number, out: Stat[]): Promise<void> => {
      const reusable = whole && !dirty.has(dir);
      const hit = reusable ? this.caches.listings.get(dir, base.hash) : undefined;
      if (hit) {
        for (const s of hit) out.push(s);
        return;
      }
      const start = out.length;
      const { tree, names } = await this.merged(dir, base, rowsByDir);
      for (const name of names) {
        const e = tree.get(name) as Entry;
        const child = joinPath(dir, name);
        out.push(e.kind === "symlink" ? await this.toStat(child, e) : plainStat(child, name, e));
        if (e.kind === "dir" && depth < maxDepth) await list(child, e, depth + 1, out);
      }
      // The whole listing is kept as the array returned, so a clean tree lists as the same array.
      if (reusable) this.caches.listings.set(dir, base.hash, start === 0 ? out : out.slice(start));
    };
    const out: Stat[] = [];
    await list(path, top, 1, out);
    return out;
  }

  async writeFile(path: string, data: Uint8Array, options: WriteOptions): Promise<MutationResult> {
    const hash = data.length === 0 ? EMPTY_SHA256 : sha256(data);
    let stored = false;
    return this.mutate(async (snap) => {
      if (options.expectSha256 === null) checkExpectation(path, await snap.resolve(path), null);
      const target = await this.writeTarget(snap, path);
      const current = await snap.resolve(target);
      if (current?.kind === "dir") throw isDirectory(target);
      checkExpectation(target, current, options.expectSha256);
      const parents = await this.missingParents(snap, target);
      if (!stored) {
        await this.store.putBlobs([{ hash, data }]);
        stored = true;
      }
      // Identical bytes change nothing: no live row, so the tree (and its mtimes) stays as it was.
      const unchanged = current?.kind === "file" && current.hash === hash;
      const entry: Entry = {
        kind: "file",
        hash,
        size: data.length,
        mode: current?.mode ?? options.mode ?? FILE_MODE,
        mtime: Date.now(),
      };
      return {
        set: unchanged ? [] : [...parents, { path: target, entry }],
        events: [{ op: options.op, path: target, oldHash: current?.hash ?? null, newHash: hash }],
        result: { path: target, kind: "file", size: data.length, sha256: hash },
      };
    });
  }

  async mkdir(path: string): Promise<MutationResult> {
    return this.mutate(async (snap) => {
      const current = await snap.resolve(path);
      if (current?.kind === "dir") return null;
      if (current) throw notADirectoryThere(path);
      const parents = await this.missingParents(snap, path);
      return {
        set: [...parents, { path, entry: newDir() }],
        events: [{ op: "mkdir", path, oldHash: null, newHash: null }],
        result: { path, kind: "dir", size: 0, sha256: null },
      };
    }, path);
  }

  async remove(path: string, options: { recursive?: boolean; expectSha256?: Hash }): Promise<MutationResult> {
    if (path === ROOT) throw new AfsError("INVALID_ARGUMENT", "cannot delete the workspace root /");
    return this.mutate(async (snap) => {
      const current = await snap.resolve(path);
      if (!current) throw notFound(path);
      if (options.expectSha256 !== undefined) checkExpectation(path, current, options.expectSha256);
      if (current.kind === "dir" && !options.recursive && (await snap.children(path, current)).size > 0) {
        throw nonEmptyDirectory(path);
      }
      return {
        clearUnder: current.kind === "dir" ? [path] : [],
        set: [{ path, entry: null }],
        events: [{ op: "delete", path, oldHash: current.kind === "dir" ? null : current.hash, newHash: null }],
        result: { path, kind: "deleted", size: 0, sha256: null },
      };
    });
  }

  async rename(from: string, to: string, options: { overwrite?: boolean }): Promise<MutationResult> {
    if (from === ROOT || to === ROOT) throw new AfsError("INVALID_ARGUMENT", "cannot rename the workspace root /");
    if (isWithin(to, from) && to !== from) {
      throw moveIntoItself(from, to, { path: from, new_path: to });
    }
    return this.mutate(async (snap) => {
      const source = await snap.resolve(from);
      if (!source) throw notFound(from);
      const result = {
        path: to,
        kind: source.kind,
        size: source.size,
        sha256: source.kind === "dir" ? null : source.hash,
      };
      if (from === to) return { set: [], events: [], result };
      const target = await snap.resolve(to);
      if (target?.kind === "dir") {
        throw existingDirectory(to);
      }
      if (target && !options.overwrite) {
        throw targetExists(to);
      }
      const parents = await this.missingParents(snap, to);
      const moved: OverlayRow[] = [];
      if (source.kind === "dir") {
        // The directory keeps its base tree; live changes below it move along with it.
        for (const row of await this.store.overlayUnder(this.workspace, from)) {
          moved.push({ path: rebase(row.path, from, to), entry: row.entry });
        }
      }
      return {
        clearUnder: source.kind === "dir" ? [from, to] : [],
        set: [...parents, { path: from, entry: null }, { path: to, entry: source }, ...moved],
        events: [
          { op: "rename", path: from, oldHash: result.sha256, newHash: null },
          { op: "rename", path: to, oldHash: target?.hash ?? null, newHash: result.sha256 },
        ],
        result,
      };
    });
  }

  /**
   * Puts `entry` (a file by its stored blob, or a directory by its stored tree) at `path` as one
   * change, replacing whatever is there and below: how history restores a version or a subtree.
   * Every file it changes gets an event `op` naming its old and new content.
   */
  async place(path: string, entry: Entry, op: string): Promise<MutationResult> {
    if (path === ROOT) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        "cannot restore the workspace root / this way; restore a checkpoint (afs cp restore)",
      );
    }
    return this.mutate(async (snap) => {
      const current = await snap.resolve(path);
      const before = await liveFilesUnder(this.store, this.trees, snap, path);
      const after = await filesOf(this.trees, path, entry);
      const events: Planned["events"] = [];
      for (const p of [...new Set([...before.keys(), ...after.keys()])].sort()) {
        const oldHash = before.get(p) ?? null;
        const newHash = after.get(p) ?? null;
        if (oldHash !== newHash) events.push({ op, path: p, oldHash, newHash });
      }
      const result = { path, kind: entry.kind, size: entry.size, sha256: entry.kind === "dir" ? null : entry.hash };
      if (events.length === 0 && current?.kind === entry.kind) return { set: [], events: [], result };
      if (events.length === 0) events.push({ op, path, oldHash: null, newHash: null });
      return {
        clearUnder: current?.kind === "dir" ? [path] : [],
        set: [...(await this.missingParents(snap, path)), { path, entry: { ...entry, mtime: Date.now() } }],
        events,
        result,
      };
    });
  }

  /**
   * Runs plan → commit until the commit lands on an unmoved revision. A null plan is a no-op.
   * Writers of one workspace in this process take turns (they would only lose races to each other,
   * each loss a wasted round of store reads); other processes still race, and a lost race is
   * recomputed after a jittered pause.
   */
  private mutate(plan: (snap: Snapshot) => Promise<Planned | null>, noopPath?: string): Promise<MutationResult> {
    return this.caches.writers.run([`${this.store.url}\0${this.workspace}`], () =>
      retryOnConflict(
        async () => {
          const snap = await Snapshot.take(this.store, this.trees, this.workspace, this.roots);
          let planned: Planned | null;
          try {
            planned = await plan(snap);
          } catch (e) {
            // Refused on a snapshot that met a commit halfway: plan again on a whole one.
            if (!(await snap.stillCurrent())) return RETRY;
            throw e;
          }
          if (!planned || planned.events.length === 0) {
            const p = planned?.result.path ?? (noopPath as string);
            return planned ? { ...planned.result, revision: snap.revision } : { ...(await this.noop(snap, p)) };
          }
          const revision = await retryIfConflict(
            this.store.commit(this.workspace, {
              expectRevision: snap.revision,
              clearUnder: planned.clearUnder,
              set: planned.set,
              events: planned.events.map((e) => ({ ...e, actor: this.actor, surface: this.surface })),
            }),
          );
          return revision === RETRY ? RETRY : { ...planned.result, revision };
        },
        { giveUp: tooBusy(this.workspace) },
      ),
    );
  }

  private async noop(snap: Snapshot, path: string): Promise<MutationResult> {
    const e = await snap.resolve(path);
    return {
      path,
      kind: e?.kind ?? "deleted",
      size: e?.size ?? 0,
      sha256: e && e.kind !== "dir" ? e.hash : null,
      revision: snap.revision,
    };
  }

  /** Directory rows for every ancestor of `path` that does not exist yet; refuses a file in the way. */
  private async missingParents(snap: Snapshot, path: string): Promise<OverlayRow[]> {
    const rows: OverlayRow[] = [];
    await snap.prefetch([path]);
    for (const dir of ancestors(path)) {
      if (dir === ROOT) continue;
      const e = rows.length > 0 ? null : await snap.resolve(dir);
      if (e && e.kind !== "dir") {
        throw new AfsError("INVALID_PATH", `${dir} is a ${e.kind}, so ${path} cannot be created under it`, { path });
      }
      if (!e) rows.push({ path: dir, entry: newDir() });
    }
    return rows;
  }

  /** Writes go through a symlink to its target, like writing to a symlinked file on disk. */
  private async writeTarget(snap: Snapshot, path: string): Promise<string> {
    const e = await snap.resolve(path);
    if (e?.kind !== "symlink") return path;
    try {
      return (await this.follow(snap, path)).path;
    } catch (err) {
      if (err instanceof AfsError && err.code === "NOT_FOUND") return err.details.path as string;
      throw err;
    }
  }

  /** Resolves symlinks (within the workspace) to the final existing entry. */
  private follow(snap: Snapshot, path: string): Promise<{ path: string; entry: Entry }> {
    return followSymlinks(
      path,
      (p) => snap.resolve(p),
      (hash) => this.blob(hash),
    );
  }

  private blob(hash: Hash): Promise<Buffer> {
    return cachedBlob(this.store, this.caches.blobs, hash);
  }

  private toStat(path: string, e: Entry): Promise<Stat> {
    return statOf(path, e, (hash) => this.blob(hash));
  }
}

function checkExpectation(path: string, current: Entry | null, expect: Hash | null | undefined): void {
  if (expect === undefined) return;
  if (expect === null) {
    if (current) throw alreadyExists(path);
    return;
  }
  if (!current) throw notFound(path);
  if (current.hash !== expect) throw changed(path, expect, current.hash);
}

const newDir = (): Entry => ({ kind: "dir", hash: EMPTY_TREE, size: 0, mode: DIR_MODE, mtime: Date.now() });
