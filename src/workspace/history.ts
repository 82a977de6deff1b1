// A file's history read from the per-path event index: its versions newest first (renames followed
// back to where the file came from), the checkpoints holding each, and a version named by its short
// id or by a checkpoint. Costs follow the path's own events, never the length of the whole log.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import type { EventRecord } from "../core/event.js";
import type { Hash } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import { segments } from "../core/paths.js";
import type { CheckpointRecord, Store, WorkspaceRecord } from "../store/store.js";
import { EMPTY_TREE, type TreeReader } from "./tree.js";

/** Hex digits of a content hash that name a version; more may be given, fewer than MIN_ID_DIGITS not. */
export const ID_DIGITS = 12;
const MIN_ID_DIGITS = 4;
/** How far back a short id or an undelete looks (events of the path and the paths it came from). */
export const MAX_EVENTS_SEARCHED = 10_000;
/** Op of the entry standing for what a path held before its first recorded change. */
export const BASE_OP = "base";
/**
 * Op of a checkpoint restore: one event at "/" naming the old and new root trees. The history of a
 * path shows it as a version of its own where the two trees differ there (never written per file,
 * so a restore stays one cheap change however large the tree).
 */
export const CHECKPOINT_RESTORE_OP = "restore";
/** "/" events read per round trip when looking for restores (checkpoints share the path). */
const ROOT_PAGE = 200;

export const shortId = (hash: Hash): string => hash.slice(0, ID_DIGITS);

export interface FileVersion {
  /** Short content id (the sha256's first 12 hex digits); null where the change deleted the file. */
  id: string | null;
  /** The event that made it; null for the base (what the path held before its first change). */
  seq: number | null;
  time: number | null;
  actor: string | null;
  surface: string | null;
  /**
   * write, replace, patch, rename, record, sync, delete, restore_version, undelete, restore (a
   * checkpoint restore that changed the file; sha256 null where it took the file away), … or "base".
   */
  op: string;
  /** Where the file was then (renames followed). */
  path: string;
  sha256: Hash | null;
  /** Null for a deletion, or when the content is no longer stored (gc collected it). */
  size: number | null;
  /** False when the store no longer holds the content. */
  available: boolean;
  /** Names of the checkpoints that hold this content at this path. */
  checkpoints: string[];
}

export interface VersionPage {
  versions: FileVersion[];
  /** Pass as `cursor` for the next (older) page; null when this page reached the beginning. */
  next: string | null;
}

/** Where a walk back through a path's history stands: events at `path` below `before`. */
interface Position {
  path: string;
  before: number | null;
}

const encodeCursor = (p: Position): string => `${p.before ?? ""}:${p.path}`;

function decodeCursor(cursor: string): Position {
  const at = cursor.indexOf(":");
  const seq = Number(cursor.slice(0, at));
  if (at < 1 || !Number.isInteger(seq) || seq < 1 || !cursor.slice(at + 1).startsWith("/")) {
    throw new AfsError("INVALID_ARGUMENT", `not a history cursor: ${cursor}; pass the next value a history page gave`);
  }
  return { path: cursor.slice(at + 1), before: seq };
}

/**
 * The path's events newest first, continuing at a rename's source when the walk meets the rename
 * that brought the file here. Ends after `max` events or at the start of the history.
 */
async function* walkBack(store: Store, workspace: string, from: Position, max: number): AsyncGenerator<EventRecord> {
  const at = { ...from };
  let left = max;
  while (left > 0) {
    const page = await store.listPathEvents(workspace, at.path, at.before, Math.min(left, 200));
    if (page.length === 0) return;
    let moved = false;
    for (const e of page) {
      left--;
      at.before = e.seq;
      yield e;
      const source = e.op === "rename" && e.newHash !== null ? await renameSource(store, workspace, e) : null;
      if (source) {
        at.path = source.path;
        at.before = source.seq;
        moved = true;
        break;
      }
      if (left === 0) return;
    }
    if (!moved && page.length < 200) return;
  }
}

/** A rename is two events in one commit, source then target: the source of `arrival`, if it is one. */
async function renameSource(store: Store, workspace: string, arrival: EventRecord): Promise<EventRecord | null> {
  const [prior] = await store.listEvents(workspace, arrival.seq - 2, 1);
  return prior && prior.op === "rename" && prior.newHash === null && prior.oldHash === arrival.newHash ? prior : null;
}

/** Newest first: a restore and a path event never share a seq (each change has its own). */
const newestFirst = (a: EventRecord, b: EventRecord): number => b.seq - a.seq;

const baseVersion = (e: EventRecord, hash: Hash): Omit<FileVersion, "size" | "available" | "checkpoints"> => ({
  id: shortId(hash),
  seq: null,
  time: null,
  actor: null,
  surface: null,
  op: BASE_OP,
  path: e.path,
  sha256: hash,
});

/** Reads a path's history; one per engine, caching what checkpoints hold at a path (they never change). */
export class HistoryReader {
  /** `${root}\0${path}` → hash there (null: nothing, or a directory). */
  private readonly held = new WeightedLru<string, { hash: Hash | null }>(200_000, () => 1);
  /** `${workspace}\0${createdAt}` → its checkpoint restores (newest first) among its events up to seq `upTo`. */
  private readonly restoreLog = new WeightedLru<string, { upTo: number; restores: EventRecord[] }>(1_000, () => 1);

  constructor(
    private readonly store: Store,
    private readonly trees: TreeReader,
  ) {}

  /** `record`: the workspace as just read, when the caller has it (saves reading it again). */
  async versions(
    workspace: string,
    path: string,
    options: { limit: number; cursor?: string; record?: WorkspaceRecord },
  ): Promise<VersionPage> {
    const start = options.cursor ? decodeCursor(options.cursor) : { path, before: null };
    const own: EventRecord[] = [];
    // One more than asked for says whether an older page exists.
    for await (const e of walkBack(this.store, workspace, start, options.limit + 1)) own.push(e);
    // Checkpoint restores that changed the file, merged in by seq: only those newer than the last of
    // its own events that could still make the page (all the older ones when the walk reached the start).
    const floor = own.length > options.limit ? (own[options.limit] as EventRecord).seq : 0;
    const restores = await this.restoresAt(options.record ?? workspace, start, own, floor);
    const events = [...own, ...restores].sort(newestFirst);
    let more = events.length > options.limit;
    const page = events.slice(0, options.limit);
    const versions: Omit<FileVersion, "size" | "available" | "checkpoints">[] = page.map((e) => ({
      id: e.newHash ? shortId(e.newHash) : null,
      seq: e.seq,
      time: e.time,
      actor: e.actor,
      surface: e.surface,
      op: e.op,
      path: e.path,
      sha256: e.newHash,
    }));
    const last = page[page.length - 1];
    if (!more) {
      // What the path held before its first recorded change (a checkpoint's, an import's, a fork's):
      // the old content of the oldest change, which on a page of its own is the previous page's last.
      const oldest = last ?? (start.before === null ? undefined : await this.eventAt(workspace, start));
      // A rename's old content belongs to the file it replaced or moved (already listed), not this one.
      if (oldest?.oldHash && oldest.op !== "rename") {
        if (versions.length < options.limit) versions.push(baseVersion(oldest, oldest.oldHash));
        else more = true;
      }
    }
    const next = more && last ? encodeCursor(await this.positionAfter(workspace, last)) : null;
    return { versions: await this.describe(workspace, versions), next };
  }

  /** The change at `at.before` as the file at `at.path` saw it (a restore read at that path). */
  private async eventAt(workspace: string, at: Position): Promise<EventRecord | undefined> {
    const [e] = await this.store.listEvents(workspace, (at.before as number) - 1, 1);
    if (!e || !isCheckpointRestore(e) || at.path === "/") return e;
    return (await this.restoreAt(e, at.path)) ?? undefined;
  }

  /**
   * The checkpoint restores below `from.before` and above `floor` that changed the file, each as an
   * event at the path the file had then (that of its next older own event; past the oldest, where
   * the walk would go on), newest first. Read from the "/" events through the per-path index, which
   * holds checkpoints and restores only.
   */
  private async restoresAt(
    workspace: string | WorkspaceRecord,
    from: Position,
    own: readonly EventRecord[],
    floor: number,
  ): Promise<EventRecord[]> {
    if (from.path === "/") return [];
    const found: EventRecord[] = [];
    let tail: string | null = null;
    for (const r of await this.rootRestores(workspace, from.before, floor)) {
      const older = own.find((e) => e.seq < r.seq);
      let path: string;
      if (older) path = older.path;
      else {
        const oldest = own[own.length - 1];
        const name = typeof workspace === "string" ? workspace : workspace.name;
        tail ??= oldest ? (await this.positionAfter(name, oldest)).path : from.path;
        path = tail;
      }
      const version = await this.restoreAt(r, path);
      if (version) found.push(version);
    }
    return found;
  }

  /**
   * The workspace's checkpoint restores with seq in (floor, before), newest first. Events never
   * change, so each workspace's restores are kept here and only the "/" events appended since the
   * last look are read: none at all while the workspace's revision stays where it was.
   */
  private async rootRestores(
    workspace: string | WorkspaceRecord,
    before: number | null,
    floor: number,
  ): Promise<EventRecord[]> {
    const ws = typeof workspace === "string" ? await this.store.getWorkspace(workspace) : workspace;
    if (!ws) return [];
    // The creation time tells a workspace from another made later under the same name.
    const key = `${ws.name}\0${ws.createdAt}`;
    const known = this.restoreLog.get(key) ?? { upTo: 0, restores: [] };
    let log = known;
    if (ws.revision > known.upTo) {
      const fresh: EventRecord[] = [];
      let upTo = ws.revision;
      let below: number | null = null;
      // At most revision - upTo events are new (more only if some landed since the record was read).
      let limit = Math.min(ROOT_PAGE, ws.revision - known.upTo);
      for (let done = false; !done; limit = ROOT_PAGE) {
        const page = await this.store.listPathEvents(ws.name, "/", below, limit);
        for (const e of page) {
          if (e.seq <= known.upTo) {
            done = true;
            break;
          }
          upTo = Math.max(upTo, e.seq);
          if (isCheckpointRestore(e)) fresh.push(e);
          below = e.seq;
        }
        if (page.length < limit) done = true;
      }
      log = { upTo, restores: [...fresh, ...known.restores] };
      const now = this.restoreLog.get(key);
      if (!now || now.upTo < log.upTo) this.restoreLog.set(key, log);
    }
    return log.restores.filter((e) => e.seq > floor && (before === null || e.seq < before));
  }

  /**
   * A restore as a change of `path` (old and new content read in the two root trees), or null where
   * it left it alone, or where gc has since taken either tree (a deleted checkpoint's): then what it
   * did there can no longer be told, and the rest of the history still lists.
   */
  private async restoreAt(e: EventRecord, path: string): Promise<EventRecord | null> {
    try {
      const oldHash = e.oldHash ? await this.hashAt(e.oldHash, path) : null;
      const newHash = e.newHash ? await this.hashAt(e.newHash, path) : null;
      return oldHash === newHash ? null : { ...e, path, oldHash, newHash };
    } catch (err) {
      if (!(err instanceof AfsError && err.code === "IO_ERROR") || (await this.rootsStored(e))) throw err;
      return null;
    }
  }

  private async rootsStored(e: EventRecord): Promise<boolean> {
    for (const root of [e.oldHash, e.newHash]) {
      if (root !== null && root !== EMPTY_TREE && !(await this.store.getTree(root))) return false;
    }
    return true;
  }

  /** Where the walk goes on after `e` (at a rename's source when `e` brought the file here). */
  private async positionAfter(workspace: string, e: EventRecord): Promise<Position> {
    const source = e.op === "rename" && e.newHash ? await renameSource(this.store, workspace, e) : null;
    return source ? { path: source.path, before: source.seq } : { path: e.path, before: e.seq };
  }

  private async describe(
    workspace: string,
    versions: Omit<FileVersion, "size" | "available" | "checkpoints">[],
  ): Promise<FileVersion[]> {
    const hashes = [...new Set(versions.map((v) => v.sha256).filter((h): h is Hash => h !== null))];
    const sizes = new Map(await Promise.all(hashes.map(async (h) => [h, await this.store.blobSize(h)] as const)));
    const holders = await this.holders(workspace, versions);
    return versions.map((v) => {
      const size = v.sha256 ? (sizes.get(v.sha256) ?? null) : null;
      return {
        ...v,
        size,
        available: v.sha256 !== null && size !== null,
        checkpoints: v.sha256 ? (holders.get(`${v.path}\0${v.sha256}`) ?? []) : [],
      };
    });
  }

  /**
   * `${path}\0${hash}` → names of checkpoints holding that content there. Only checkpoints made
   * since the oldest version listed are looked in (an older one could hold the same bytes only if
   * they were written twice; the base version, of unknown age, and a checkpoint restore, which
   * brings back content older than itself, look in all of them).
   */
  private async holders(
    workspace: string,
    versions: readonly Pick<FileVersion, "path" | "time" | "sha256" | "op">[],
  ): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const wanted = versions.filter((v) => v.sha256 !== null);
    if (wanted.length === 0) return out;
    const since = Math.min(
      ...wanted.map((v) => (v.op === CHECKPOINT_RESTORE_OP ? null : v.time) ?? Number.NEGATIVE_INFINITY),
    );
    const paths = [...new Set(wanted.map((v) => v.path))];
    const checkpoints = (await this.store.listCheckpoints(workspace)).filter((cp) => cp.createdAt >= since);
    // Oldest first, so each version lists its checkpoints in the order they were made.
    for (const cp of checkpoints.reverse()) {
      for (const p of paths) {
        const hash = await this.hashIn(cp, p);
        if (!hash) continue;
        const key = `${p}\0${hash}`;
        out.set(key, [...(out.get(key) ?? []), cp.name]);
      }
    }
    return out;
  }

  /** The content at `path` in a checkpoint (null: absent or a directory). */
  private hashIn(cp: CheckpointRecord, path: string): Promise<Hash | null> {
    return this.hashAt(cp.root, path);
  }

  /** The content at `path` in a root tree (null: absent or a directory); trees never change, so cached. */
  private async hashAt(root: Hash, path: string): Promise<Hash | null> {
    const key = `${root}\0${path}`;
    const hit = this.held.get(key);
    if (hit) return hit.hash;
    const entry = await this.trees.lookup(root, segments(path));
    const hash = entry && entry.kind !== "dir" ? entry.hash : null;
    this.held.set(key, { hash });
    return hash;
  }

  /**
   * What `ref` names at `path`: a checkpoint (by name or id) holding the path, else a version by its
   * short id (a prefix of its sha256) among the path's history, renames followed.
   */
  async resolve(workspace: string, path: string, ref: string): Promise<{ entry: Entry; label: string }> {
    const cp = await this.store.getCheckpoint(workspace, ref);
    if (cp) {
      let entry = await this.trees.lookup(cp.root, segments(path));
      // Renamed since: the checkpoint holds the file under a name it had before.
      for (const former of entry ? [] : await this.formerPaths(workspace, path)) {
        entry = await this.trees.lookup(cp.root, segments(former));
        if (entry) break;
      }
      if (!entry) {
        throw new AfsError("NOT_FOUND", `${path} is not in checkpoint ${cp.name} of workspace ${workspace}`, {
          path,
          checkpoint: cp.name,
        });
      }
      return { entry, label: `checkpoint ${cp.name}` };
    }
    const id = ref.toLowerCase();
    if (!new RegExp(`^[0-9a-f]{${MIN_ID_DIGITS},64}$`).test(id)) {
      throw new AfsError(
        "NOT_FOUND",
        `${ref} is neither a checkpoint of workspace ${workspace} nor a version id; see afs fs history ${path}`,
        { path, version: ref },
      );
    }
    const found = new Set<Hash>();
    for await (const e of walkBack(this.store, workspace, { path, before: null }, MAX_EVENTS_SEARCHED)) {
      for (const h of [e.newHash, e.oldHash]) if (h?.startsWith(id)) found.add(h);
    }
    // Content only a checkpoint restore put there or took away (its trees hold it, no event names it).
    for (const r of path === "/" ? [] : await this.rootRestores(workspace, null, 0)) {
      const change = await this.restoreAt(r, path);
      for (const h of [change?.newHash, change?.oldHash]) if (h?.startsWith(id)) found.add(h);
    }
    if (found.size > 1) {
      throw new AfsError("INVALID_ARGUMENT", `version id ${ref} of ${path} is ambiguous; give more of its digits`, {
        path,
        version: ref,
      });
    }
    const [hash] = found;
    if (!hash) {
      throw new AfsError("NOT_FOUND", `${path} has no version ${ref}; see afs fs history ${path}`, {
        path,
        version: ref,
      });
    }
    const size = await this.store.blobSize(hash);
    if (size === null) throw collected(path, shortId(hash));
    return { entry: { kind: "file", hash, size, mode: 0o644, mtime: 0 }, label: `version ${shortId(hash)}` };
  }

  /** The names the file at `path` had before, newest first (renames followed back). */
  private async formerPaths(workspace: string, path: string): Promise<string[]> {
    const names: string[] = [];
    for await (const e of walkBack(this.store, workspace, { path, before: null }, MAX_EVENTS_SEARCHED)) {
      if (e.path !== path && !names.includes(e.path)) names.push(e.path);
    }
    return names;
  }

  /**
   * What a deleted path last held: the content its newest change left there, or the content its
   * newest delete (or move away) took, whichever comes first going back (a file gone with its
   * directory has no delete of its own); else what the newest checkpoint holding it has there (a
   * deleted directory). A checkpoint restore counts as a change of the path where its trees differ
   * there. Null when neither exists.
   */
  async lastBeforeDelete(workspace: string, path: string): Promise<{ entry: Entry; label: string } | null> {
    let newest: { seq: number; hash: Hash } | null = null;
    let before: number | null = null;
    for (let seen = 0; seen < MAX_EVENTS_SEARCHED && !newest; ) {
      const page = await this.store.listPathEvents(workspace, path, before, 200);
      for (const e of page) {
        const hash = e.newHash ?? e.oldHash;
        if (hash !== null) {
          newest = { seq: e.seq, hash };
          break;
        }
        before = e.seq;
      }
      seen += page.length;
      if (page.length < 200) break;
    }
    // A checkpoint restore since then that put the file there or took it away says it last.
    if (path !== "/") {
      for (const r of await this.rootRestores(workspace, null, newest?.seq ?? 0)) {
        const change = await this.restoreAt(r, path);
        const hash = change?.newHash ?? change?.oldHash ?? null;
        if (hash) {
          newest = { seq: r.seq, hash };
          break;
        }
      }
    }
    if (newest) {
      const size = await this.store.blobSize(newest.hash);
      if (size === null) throw collected(path, shortId(newest.hash));
      return {
        entry: { kind: "file", hash: newest.hash, size, mode: 0o644, mtime: 0 },
        label: `version ${shortId(newest.hash)}`,
      };
    }
    for (const cp of await this.store.listCheckpoints(workspace)) {
      const entry = await this.trees.lookup(cp.root, segments(path));
      if (entry) return { entry, label: `checkpoint ${cp.name}` };
    }
    return null;
  }
}

const isCheckpointRestore = (e: EventRecord): boolean => e.op === CHECKPOINT_RESTORE_OP && e.path === "/";

export const collected = (path: string, id: string): AfsError =>
  new AfsError(
    "NOT_FOUND",
    `version ${id} of ${path} is no longer stored: gc collected it after the workspace's versioning window (see afs ws versioning)`,
    { path, version: id },
  );
