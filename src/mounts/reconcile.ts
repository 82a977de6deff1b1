// One sync round over some paths: for each, the version last synced (B), what the directory holds
// (L) and what the workspace holds (R) decide. L = R: nothing to do. Only R moved: written to disk
// where the disk still holds B. Only L moved: uploaded naming R as the version it replaces. Both
// moved: the workspace's version stays at the path and the local one is kept beside it.
import { readFileSync } from "node:fs";
import { readlink } from "node:fs/promises";
import type { Entry } from "../core/entry.js";
import { isAfsError } from "../core/errors.js";
import type { MountState } from "../core/mount-state.js";
import { type SyncedPath, type SyncedVersion, sameVersion } from "../core/mount-state.js";
import { ancestors, baseName, isWithin, joinPath, parentOf, ROOT } from "../core/paths.js";
import type { Stat, Volume } from "../volume/volume.js";
import type { Afs, SyncChange } from "../workspace/afs.js";
import { recordTargets } from "../workspace/record.js";
import { newDir } from "../workspace/sync-commit.js";
import { conflictName, type LocalDir, type LocalVersion, SMALL_FILE } from "./local-dir.js";

/** When both sides changed a path: keep the workspace's version at it, keep the local one, or only report. */
export type BothChanged = "remote" | "local" | "refuse";

export interface SyncContext {
  afs: Afs;
  workspace: string;
  local: LocalDir;
  state: MountState;
  readonly: boolean;
  host: string;
  /** Conflict copies made and not uploaded yet: their upload is logged as op "conflict". */
  conflictCopies: Set<string>;
  /** Who the uploads are recorded as, asked at each commit (undefined: the engine's actor). */
  actor?: (() => string | undefined) | undefined;
}

export interface RoundResult {
  uploaded: number;
  downloaded: number;
  /** Paths changed on both sides (their local version was kept as a conflict copy). */
  conflicts: string[];
  /** With "refuse": paths both sides hold, differently. */
  differing: string[];
  /** Paths to look at again next round: a precondition failed, a conflict copy to upload, an error. */
  again: string[];
  /** Read-only: local changes not uploaded. */
  held: string[];
  errors: { path: string; message: string }[];
  /** The sequence numbers of this round's own upload events (not to be applied back). */
  own: { from: number; to: number } | null;
}

/** How many paths a round decides at once (reads, hashes, downloads in flight). */
const DECIDE_CONCURRENCY = 16;

const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Runs `fn` over `items` in order, at most `limit` at a time. */
async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const versionOfStat = (s: Stat | null | undefined): SyncedVersion | null =>
  s ? { kind: s.kind, sha256: s.sha256 ?? null, size: s.kind === "dir" ? 0 : s.size, mode: s.mode } : null;

const row = (path: string, v: SyncedVersion, disk: string | null): SyncedPath => ({
  path,
  kind: v.kind,
  sha256: v.sha256,
  size: v.size,
  mode: v.mode,
  disk,
});

/** Brings `targets` (and everything below each) to agreement; see the file's opening lines. */
export async function reconcile(
  ctx: SyncContext,
  targets: Iterable<string>,
  policy: BothChanged,
): Promise<RoundResult> {
  return new Round(ctx, policy, await ctx.afs.workspaces.volume(ctx.workspace)).run(targets);
}

class Round {
  readonly result: RoundResult = {
    uploaded: 0,
    downloaded: 0,
    conflicts: [],
    differing: [],
    again: [],
    held: [],
    errors: [],
    own: null,
  };
  private readonly base = new Map<string, SyncedPath>();
  private readonly remote = new Map<string, Stat>();
  private readonly put: SyncedPath[] = [];
  private readonly drop: string[] = [];
  /** Uploads in path order, then removals of directories deepest first. */
  private readonly uploads: { change: SyncChange; after: SyncedPath | null }[] = [];
  private readonly dirRemovals: { change: SyncChange; after: null }[] = [];
  /** Uploads that replace a workspace directory emptied by the removals before them. */
  private readonly replacements: { change: SyncChange; after: SyncedPath | null }[] = [];
  private readonly localDirRemovals: { path: string }[] = [];
  /** Subtrees moved aside or failed this round: their paths wait for the next. */
  private readonly skipped: string[] = [];

  constructor(
    private readonly ctx: SyncContext,
    private readonly policy: BothChanged,
    private readonly volume: Volume,
  ) {}

  async run(targets: Iterable<string>): Promise<RoundResult> {
    const { local, state } = this.ctx;
    const paths = new Set<string>();
    // Directories that could not be listed: reported and tried again, nothing below them decided
    // meanwhile (what the disk holds there is unknown, never taken for deleted).
    const unlisted: { dir: string; e: unknown }[] = [];
    const wanted = recordTargets(targets);
    const tops = await this.ctx.afs.mounts.entries(
      this.ctx.workspace,
      wanted.filter((t) => t !== ROOT),
    );
    for (const t of wanted) {
      if (t !== ROOT) paths.add(t);
      for (const p of await local.below(t, (dir, e) => unlisted.push({ dir, e }))) paths.add(p);
      const top = tops.get(t);
      if (top) this.remote.set(t, top);
      if (t === ROOT || top?.kind === "dir") {
        try {
          for await (const s of this.volume.walk(t)) {
            this.remote.set(s.path, s);
            paths.add(s.path);
          }
        } catch (e) {
          if (!isAfsError(e) || e.code !== "NOT_FOUND") throw e;
          // Removed in the workspace since its entry was read: nothing decided below it this round;
          // the removal's event brings it back next round.
          this.skipped.push(t);
          this.result.again.push(t);
        }
      }
      for (const r of await state.under(t)) {
        this.base.set(r.path, r);
        if (r.path !== ROOT) paths.add(r.path);
      }
    }
    for (const { dir, e } of unlisted) this.fail(dir, e);
    // Paths are decided several at a time (each waits for its ancestors'), since most of a path's
    // time is waiting on the disk or the store: one at a time, a 100,000-file tree took minutes.
    const started = new Map<string, Promise<void>>();
    await inParallel([...paths].sort(), DECIDE_CONCURRENCY, async (path) => {
      const done = this.decideAfterAncestors(path, started);
      started.set(path, done);
      await done;
    });
    if (this.policy === "refuse") return this.result;
    // Decisions ended in any order: removals of directories go deepest first, uploads in path order.
    this.localDirRemovals.sort(byPath).reverse();
    this.uploads.sort((a, b) => byPath(a.change, b.change));
    this.dirRemovals.sort((a, b) => byPath(a.change, b.change));
    for (const { path } of this.localDirRemovals) {
      const ok = await local.remove(path, "dir").catch(() => false);
      // What stays in it is ignored (build outputs): the directory stays with them, and that is done.
      if (!ok && !(await local.keepsOnlyIgnored(path))) this.result.again.push(path);
    }
    await this.upload();
    await state.apply({ put: this.put, remove: this.drop });
    return this.result;
  }

  /** Decides `path` once every ancestor decided this round has been (sorted order starts them first). */
  private async decideAfterAncestors(path: string, started: ReadonlyMap<string, Promise<void>>): Promise<void> {
    for (const a of ancestors(path)) await started.get(a);
    if (this.skipped.some((s) => isWithin(path, s))) return;
    try {
      await this.decide(path);
    } catch (e) {
      this.fail(path, e);
    }
  }

  private fail(path: string, e: unknown): void {
    this.result.errors.push({ path, message: e instanceof Error ? e.message : String(e) });
    this.result.again.push(path);
    this.skipped.push(path);
  }

  private async decide(path: string): Promise<void> {
    const { local, readonly } = this.ctx;
    const b = this.base.get(path) ?? null;
    const r = this.remote.get(path) ?? null;
    const rv = versionOfStat(r);
    const isDir = rv?.kind === "dir" || (await local.diskStat(local.abs(path))) === "dir";
    if (await local.ignored(path, isDir)) return;
    const l = await local.read(path, b, rv);
    // Nothing to sync in a directory that holds only ignored files, unless the other side has it.
    if (l?.kind === "dir" && !b && !rv && (await local.keepsOnlyIgnored(path))) return;
    if (this.policy === "refuse") {
      if (l && rv && !sameVersion(l, rv)) this.result.differing.push(path);
      return;
    }
    if (sameVersion(l, rv)) return this.remember(path, l, l?.disk ?? null);
    const localMoved = !sameVersion(l, b);
    const remoteMoved = !sameVersion(rv, b);
    // Only the workspace moved, or the local side deleted what the workspace changed: take the workspace's.
    if (!localMoved || (remoteMoved && !l)) return this.download(path, l, r);
    // Only the directory moved, or the workspace deleted what the directory changed: upload. A
    // directory replaced on disk counts as moved on both sides when anything below it moved remotely.
    const dirReplaced = l && l.kind !== "dir" && rv?.kind === "dir" && this.remoteMovedBelow(path);
    if ((!remoteMoved || !rv) && !dirReplaced) {
      if (readonly) {
        this.result.held.push(path);
        return;
      }
      return this.uploadLocal(path, l, rv);
    }
    // Both moved, differently: never a silent loss.
    this.result.conflicts.push(path);
    if (this.policy === "local" && !readonly && r && rv?.kind === "dir" && l) {
      // The local file or symlink stays at the path; the workspace's directory is written beside it
      // (uploaded next round) and removed from the path, its contents first, in this round's commit.
      const copy = await this.copyRemoteDirAside(path);
      this.ctx.conflictCopies.add(copy);
      this.result.again.push(copy);
      return this.uploadLocal(path, l, rv, "replacing");
    }
    if (this.policy === "local" && !readonly && r && rv?.kind !== "dir") {
      // The local version stays at the path; the workspace's is written beside it (uploaded next round).
      const copy = await this.copyRemoteAside(path, r);
      this.ctx.conflictCopies.add(copy);
      this.result.again.push(copy);
      return this.uploadLocal(path, l, rv);
    }
    const moved = await this.conflictPath(path);
    if (!(await local.moveAside(path, moved))) {
      this.result.conflicts.pop();
      this.result.again.push(path); // removed meanwhile: looked at anew next round
      return;
    }
    this.ctx.conflictCopies.add(moved);
    this.result.again.push(moved);
    // What was synced below the path belonged to the version moved aside: the workspace's comes anew.
    for (const q of this.base.keys()) {
      if (q !== path && isWithin(q, path)) {
        this.base.delete(q);
        this.drop.push(q);
      }
    }
    return this.download(path, null, r);
  }

  /** A conflict copy's path beside `path` that neither side holds yet. */
  private async conflictPath(path: string): Promise<string> {
    const now = new Date();
    for (let n = 1; ; n++) {
      const to = joinPath(parentOf(path), conflictName(baseName(path), this.ctx.host, now, n));
      if (this.remote.has(to) || (await this.ctx.local.diskStat(this.ctx.local.abs(to))) !== null) continue;
      if ((await this.volume.stat(to)) === null) return to;
    }
  }

  /** Whether anything below `path` (a workspace directory, walked this round) differs from what was synced. */
  private remoteMovedBelow(path: string): boolean {
    for (const [q, s] of this.remote) {
      if (q !== path && isWithin(q, path) && !sameVersion(versionOfStat(s), this.base.get(q))) return true;
    }
    for (const q of this.base.keys()) if (q !== path && isWithin(q, path) && !this.remote.has(q)) return true;
    return false;
  }

  private remember(path: string, v: SyncedVersion | null, disk: string | null): void {
    const b = this.base.get(path);
    if (v) {
      if (!b || !sameVersion(b, v) || b.disk !== disk) this.put.push(row(path, v, disk));
    } else if (b) this.drop.push(path);
  }

  /** Makes the disk hold the workspace's version, only while it still holds `l`. */
  private async download(path: string, l: LocalVersion | null, r: Stat | null): Promise<void> {
    const { local, afs } = this.ctx;
    if (!r) {
      if (!l) return this.remember(path, null, null);
      if (l.kind === "dir") {
        this.localDirRemovals.push({ path });
        return this.remember(path, null, null);
      }
      if (await local.remove(path, l.disk)) {
        this.result.downloaded++;
        return this.remember(path, null, null);
      }
      this.result.again.push(path);
      return;
    }
    const rv = versionOfStat(r) as SyncedVersion;
    if (r.kind === "dir") {
      if (l && l.kind !== "dir" && !(await local.remove(path, l.disk))) {
        this.result.again.push(path);
        return;
      }
      const made = await local.makeDir(path);
      if (made === "changed") this.result.again.push(path);
      else this.remember(path, rv, made.disk);
      return;
    }
    const expect = l?.disk ?? null;
    const placed =
      r.kind === "symlink"
        ? await local.placeSymlink(path, expect, r.target ?? "")
        : await local.placeFile(path, expect, afs.mounts.openContent(r.sha256 as string, r.size), r.mode);
    if (placed === "changed") {
      this.result.again.push(path);
      return;
    }
    this.result.downloaded++;
    this.remember(path, rv, placed.disk);
  }

  /** Writes the workspace's version of `path` beside it under a conflict name; returns that path. */
  private async copyRemoteAside(path: string, r: Stat): Promise<string> {
    const { local, afs } = this.ctx;
    const to = await this.conflictPath(path);
    const placed =
      r.kind === "symlink"
        ? await local.placeSymlink(to, null, r.target ?? "")
        : await local.placeFile(to, null, afs.mounts.openContent(r.sha256 as string, r.size), r.mode);
    if (placed === "changed") throw new Error(`${to} appeared meanwhile`);
    return to;
  }

  /**
   * The workspace's directory at `path` (walked this round) written beside it under a conflict
   * name, and its contents queued for removal from the path; returns the copy's path. What was
   * synced below the path and everything below it this round belongs to the directory moved aside.
   */
  private async copyRemoteDirAside(path: string): Promise<string> {
    const { local, afs } = this.ctx;
    const to = await this.conflictPath(path);
    const below = [...this.remote.entries()].filter(([q]) => isWithin(q, path)).sort(([p], [q]) => (p < q ? -1 : 1));
    for (const [q, s] of below) {
      const at = q === path ? to : joinPath(to, q.slice(path.length + 1));
      const placed =
        s.kind === "dir"
          ? await local.makeDir(at)
          : s.kind === "symlink"
            ? await local.placeSymlink(at, null, s.target ?? "")
            : await local.placeFile(at, null, afs.mounts.openContent(s.sha256 as string, s.size), s.mode);
      if (placed === "changed") throw new Error(`${at} appeared meanwhile`);
      if (q === path) continue;
      const change = { path: q, entry: null, expect: versionOfStat(s) };
      if (s.kind === "dir") this.dirRemovals.push({ change, after: null });
      else this.uploads.push({ change, after: null });
    }
    for (const q of this.base.keys()) {
      if (q !== path && isWithin(q, path)) {
        this.base.delete(q);
        this.drop.push(q);
      }
    }
    this.skipped.push(path);
    return to;
  }

  /** Queues the local version for upload, naming `rv` as the version it replaces. */
  private async uploadLocal(
    path: string,
    l: LocalVersion | null,
    rv: SyncedVersion | null,
    order: "in-order" | "replacing" = "in-order",
  ): Promise<void> {
    const { afs, local } = this.ctx;
    if (!l) {
      const change = { path, entry: null, expect: rv };
      if (rv?.kind === "dir") this.dirRemovals.push({ change, after: null });
      else this.uploads.push({ change, after: null });
      return;
    }
    const now = Date.now();
    let entry: Entry;
    let version: SyncedVersion = l;
    if (l.kind === "dir") entry = newDir();
    else if (l.kind === "symlink") {
      const target = Buffer.from(await readlink(local.abs(path)));
      const hash = await afs.mounts.storeBytes(target);
      entry = { kind: "symlink", hash, size: target.length, mode: l.mode, mtime: now };
      version = { ...l, sha256: hash, size: target.length };
    } else {
      // A small file's bytes as hashed; a large one stored as read now: changed since its hash was
      // taken, it uploads its newer bytes (and keeps the older stat, so the next round reads it
      // again and finds nothing new).
      let stored: { hash: string; size: number };
      try {
        stored = l.data
          ? { hash: await afs.mounts.storeBytes(l.data, l.sha256 ?? undefined), size: l.data.length }
          : await local.withFile(path, async (file) => {
              const small = l.size <= SMALL_FILE ? readFileSync(file) : null;
              return small
                ? { hash: await afs.mounts.storeBytes(small), size: small.length }
                : afs.mounts.storeFile(file);
            });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
        // Removed since it was read: the next round sees what is there now.
        this.result.again.push(path);
        return;
      }
      const { hash, size } = stored;
      entry = { kind: "file", hash, size, mode: l.mode, mtime: now };
      version = { ...l, sha256: hash, size };
    }
    const op = this.ctx.conflictCopies.has(path) ? { op: "conflict" } : {};
    const upload = { change: { path, entry, expect: rv, ...op }, after: row(path, version, l.disk) };
    (order === "replacing" ? this.replacements : this.uploads).push(upload);
  }

  private async upload(): Promise<void> {
    const { afs, workspace } = this.ctx;
    const all = [...this.uploads, ...this.dirRemovals.reverse(), ...this.replacements];
    if (all.length === 0) return;
    const { outcomes, seqs } = await afs.mounts.commit(
      workspace,
      all.map((u) => u.change),
      { actor: this.ctx.actor?.() },
    );
    this.result.own = seqs;
    for (const [i, o] of outcomes.entries()) {
      const u = all[i];
      if (!u) continue;
      if (!o.applied) {
        this.result.again.push(o.path);
        continue;
      }
      this.result.uploaded++;
      this.ctx.conflictCopies.delete(o.path);
      if (u.after) this.put.push(u.after);
      else this.drop.push(o.path);
    }
  }
}
