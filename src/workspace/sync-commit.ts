// A mount's uploads as one commit: each change names the version it replaces, checked against the
// live state atomically with the commit (the revision compare-and-swap), so a stale upload never
// overwrites a newer change; a change whose precondition fails is left out and reported.
import { DIR_MODE, type Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { type SyncedVersion, sameVersion } from "../core/mount-state.js";
import { ancestors, isWithin, ROOT } from "../core/paths.js";
import { keptChanging, RETRY, retryIfConflict, retryOnConflict } from "../core/retry.js";
import type { EventInput, OverlayRow } from "../store/store.js";
import { type EngineContext, type Snapshot, snapshot } from "./snapshot.js";
import { EMPTY_TREE } from "./tree.js";

export interface SyncChange {
  path: string;
  /** What the path should hold (a file's or symlink's blob already stored), or null: removed. */
  entry: Entry | null;
  /** What the workspace must hold there now (null: nothing); otherwise the change is refused. */
  expect: SyncedVersion | null;
  /** The event's operation when not the commit's ("conflict" for a conflict copy). */
  op?: string;
}

export interface SyncOutcome {
  path: string;
  /** False when the workspace no longer held the expected version (or a file sat where a directory must go). */
  applied: boolean;
}

export interface SyncCommitResult {
  outcomes: SyncOutcome[];
  /** The revision after the commit (the snapshot's when nothing was applied). */
  revision: number;
  /** The sequence numbers of this commit's events (null: nothing committed), so a follower can tell its own. */
  seqs: { from: number; to: number } | null;
}

export const versionOf = (e: Entry | null): SyncedVersion | null =>
  e && { kind: e.kind, sha256: e.kind === "dir" ? null : e.hash, size: e.kind === "dir" ? 0 : e.size, mode: e.mode };

export const newDir = (): Entry => ({ kind: "dir", hash: EMPTY_TREE, size: 0, mode: DIR_MODE, mtime: Date.now() });

/**
 * Applies `changes` in order (a directory's removal after its contents') as one commit, each only
 * where the workspace holds its `expect`. Events are recorded with `op`.
 */
export function commitSyncChanges(
  ctx: EngineContext,
  workspace: string,
  changes: readonly SyncChange[],
  op: string,
): Promise<SyncCommitResult> {
  return retryOnConflict(
    async () => {
      const snap = await snapshot(ctx, workspace);
      await snap.prefetch(changes.map((c) => c.path));
      const plan = new Plan(snap, op);
      const outcomes: SyncOutcome[] = [];
      for (const change of changes) outcomes.push({ path: change.path, applied: await plan.add(change) });
      if (plan.events.length === 0) return { outcomes, revision: snap.revision, seqs: null };
      const revision = await retryIfConflict(
        ctx.store.commit(workspace, {
          expectRevision: snap.revision,
          clearUnder: plan.clearUnder,
          set: plan.rows,
          events: plan.events.map((e) => ({ ...e, actor: ctx.actor, surface: ctx.surface })),
        }),
      );
      if (revision === RETRY) return RETRY;
      // A commit's events take the sequence numbers up to the new revision.
      return { outcomes, revision, seqs: { from: revision - plan.events.length + 1, to: revision } };
    },
    { giveUp: keptChanging(workspace, "while a mount uploaded its changes") },
  );
}

/** The changes accepted so far, laid over the snapshot. */
class Plan {
  readonly rows: OverlayRow[] = [];
  readonly events: Omit<EventInput, "actor" | "surface">[] = [];
  readonly clearUnder: string[] = [];
  private readonly planned = new Map<string, Entry | null>();

  constructor(
    private readonly snap: Snapshot,
    private readonly op: string,
  ) {}

  /** The live entry at `path` with the accepted changes applied. */
  private async current(path: string): Promise<Entry | null> {
    if (this.planned.has(path)) return this.planned.get(path) ?? null;
    for (const a of ancestors(path).reverse()) {
      if (!this.planned.has(a)) continue;
      const e = this.planned.get(a);
      if (e?.kind !== "dir" || e.hash === EMPTY_TREE) return null; // replaced or new: nothing stored below
      break;
    }
    return this.snap.resolve(path);
  }

  /** Whether a directory holds nothing once the accepted changes apply. */
  private async emptyDir(path: string, dir: Entry): Promise<boolean> {
    for (const [p, e] of this.planned) if (e && p !== path && isWithin(p, path)) return false;
    const children =
      this.planned.has(path) && dir.hash === EMPTY_TREE ? new Map() : await this.snap.children(path, dir);
    for (const name of children.keys()) {
      const child = path === ROOT ? `/${name}` : `${path}/${name}`;
      if (!this.planned.has(child) || this.planned.get(child) !== null) return false;
    }
    return true;
  }

  async add(change: SyncChange): Promise<boolean> {
    const { path, entry } = change;
    if (path === ROOT) throw new AfsError("INVALID_ARGUMENT", "a mount cannot replace the workspace root /");
    const current = await this.current(path);
    if (!sameVersion(versionOf(current), change.expect)) return false;
    // Already so: a directory that exists, a file with these bytes and mode.
    if (sameVersion(versionOf(current), versionOf(entry))) return true;
    // A directory goes only once empty: a change made below it meanwhile is never dropped with it.
    if (current?.kind === "dir" && !(await this.emptyDir(path, current))) return false;
    const parents: OverlayRow[] = [];
    if (entry) {
      for (const a of ancestors(path)) {
        if (a === ROOT) continue;
        const e = await this.current(a);
        if (e && e.kind !== "dir") return false;
        if (!e) parents.push({ path: a, entry: newDir() });
      }
    }
    for (const r of parents) this.planned.set(r.path, r.entry);
    this.planned.set(path, entry);
    this.rows.push(...parents, { path, entry });
    if (current?.kind === "dir") this.clearUnder.push(path);
    const hash = (e: Entry | null): Hash | null => (e && e.kind !== "dir" ? e.hash : null);
    this.events.push({ op: change.op ?? this.op, path, oldHash: hash(current), newHash: hash(entry) });
    return true;
  }
}
