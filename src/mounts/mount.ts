// A workspace as an ordinary directory, kept in step both ways: the directory watcher's changed
// paths go up (each upload naming the version it replaces), the workspace's events come down
// (written only where the disk still holds the version last synced), conflicts keep both versions.
import { mkdir, realpath, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { isAbsolute } from "node:path";
import { AfsError, isAfsError } from "../core/errors.js";
import type { EventFollower } from "../core/event.js";
import { sha256 } from "../core/hash.js";
import type { MountRecord, MountReport } from "../core/mount-state.js";
import { baseName, ROOT } from "../core/paths.js";
import { IGNORE_FILES } from "../volume/dir-scan.js";
import { DirWatcher } from "../volume/dir-watcher.js";
import type { Afs } from "../workspace/afs.js";
import { LocalDir } from "./local-dir.js";
import { type BothChanged, type RoundResult, reconcile, type SyncContext } from "./reconcile.js";

export interface MountOptions {
  workspace: string;
  /** An absolute path; created when missing. */
  dir: string;
  /** The directory follows the workspace; local edits are not uploaded (they are counted as pending). */
  readonly?: boolean;
  /**
   * First mount of a directory and a workspace that both hold differing files: which side stays at
   * each differing path (the other's version is kept beside it as a conflict copy). Without it, refused.
   */
  prefer?: "local" | "remote";
  /** Names conflict copies; default this machine's host name. */
  host?: string;
  /**
   * Who the uploads are recorded as, asked at each commit; undefined: the engine's actor. `afs acp`
   * names the agent while a turn runs, so the agent's changes (its shell's too) are its own.
   */
  actor?: () => string | undefined;
  /** How long changes settle before a sync round. Default 50 ms. */
  debounceMs?: number;
}

export type MountRunState = "starting" | "running" | "error" | "stopped";

export interface MountStatus {
  id: string;
  workspace: string;
  /** The directory's real path. */
  dir: string;
  readonly: boolean;
  state: MountRunState;
  /** Paths waiting for the next round (and, read-only, local changes not uploaded). */
  pending: number;
  /** Paths changed on both sides, over every run of this mount (each kept as a conflict copy). */
  conflicts: number;
  /** The latest conflicts' paths in this run (at most 100). */
  conflictPaths: string[];
  uploaded: number;
  downloaded: number;
  /** When the last round ended (ms since the epoch). */
  lastSync: number | null;
  lastError: string | null;
  /** When the newest flush began (ms since the epoch): what changed on disk before then has been looked at. */
  flushed: number | null;
}

const MAX_FLUSH_ROUNDS = 20;
const REMOTE_SETTLE_MS = 2;
const RETRY_AFTER_ERROR_MS = 1_000;
const EVENT_PAGE = 10_000;
/**
 * How often an idle mount looks whether its workspace still exists: a deletion appends no event
 * (the log goes with the workspace), so nothing else would tell it. One read of one record.
 */
const WORKSPACE_CHECK_MS = 5_000;

/** The directory's mount id: one mount per directory on a machine. */
export const mountId = (realDir: string): string => sha256(realDir).slice(0, 16);

export class Mount {
  private readonly again = new Set<string>();
  private readonly held = new Set<string>();
  private follower: EventFollower | null = null;
  private watcher: DirWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  /** The workspace's id when mounted: another id under the name is another workspace. */
  private workspaceId = "";
  /** Why this mount can sync no more (its workspace deleted): no round runs once set. */
  private gone: string | null = null;
  /** A background round waits for the one running. */
  private queued = false;
  /** stop() has begun (its run): its own flush is the last round; no background round is scheduled or run. */
  private stopping: Promise<MountStatus> | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private lastSeq = 0;
  /** Sequence numbers of this mount's own uploads not yet passed: their events are not applied back. */
  private own: { from: number; to: number }[] = [];
  /** How the rounds settle both-sides changes: the first mount's `prefer` until it is in step, then "remote". */
  private policy: BothChanged = "remote";
  private readonly info: MountStatus;

  private constructor(
    private readonly afs: Afs,
    private readonly ctx: SyncContext,
    record: Omit<MountRecord, "report">,
    private readonly debounceMs: number,
  ) {
    this.info = {
      id: record.id,
      workspace: record.workspace,
      dir: record.dir,
      readonly: record.readonly,
      state: "starting",
      pending: 0,
      conflicts: 0,
      conflictPaths: [],
      uploaded: 0,
      downloaded: 0,
      lastSync: null,
      lastError: null,
      flushed: null,
    };
  }

  /**
   * Mounts `dir` (created when missing) on `workspace` and returns once both hold the same files,
   * the sync then running until stop(). First mount: a missing workspace is created from the
   * directory, an empty directory receives the workspace, and differing files on both sides are
   * refused (CONFLICT) unless `prefer` says which side stays. A directory mounted before picks up
   * where it stopped: changes made on either side meanwhile are reconciled.
   */
  static async start(afs: Afs, options: MountOptions): Promise<Mount> {
    const { workspace } = options;
    if (!isAbsolute(options.dir)) {
      throw new AfsError("INVALID_ARGUMENT", `mount a directory by its absolute path, not ${options.dir}`, {
        dir: options.dir,
      });
    }
    await mkdir(options.dir, { recursive: true });
    const dir = await realpath(options.dir);
    if (!(await stat(dir)).isDirectory()) {
      throw new AfsError("INVALID_ARGUMENT", `${dir} is not a directory; mount a directory`, { dir });
    }
    const id = mountId(dir);
    const known = await afs.mounts.get(id);
    if (known && known.workspace !== workspace) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${dir} is mounted on workspace ${known.workspace}; unmount it first, or mount ${known.workspace}`,
        { dir, workspace: known.workspace },
      );
    }
    const exists = await afs.workspaces.get(workspace).then(
      () => true,
      (e: unknown) => {
        if (isAfsError(e) && e.code === "NOT_FOUND") return false;
        throw e;
      },
    );
    if (known && !exists) {
      // Never recreated silently: someone deleted it on purpose, maybe from another machine.
      throw new AfsError(
        "NOT_FOUND",
        `workspace ${workspace} mounted on ${dir} was deleted; the directory keeps its files: run afs unmount ${dir}, then afs mount ${workspace} ${dir} to create it again from the directory, or mount another workspace there`,
        { workspace, dir },
      );
    }
    const readonly = options.readonly ?? false;
    if (!exists && readonly) {
      throw new AfsError("NOT_FOUND", `workspace ${workspace} does not exist; a read-only mount needs one to follow`, {
        workspace,
      });
    }
    const record = { id, workspace, dir, readonly, createdAt: known?.createdAt ?? Date.now() };
    const local = new LocalDir(dir);
    const ctx: SyncContext = {
      afs,
      workspace,
      local,
      state: afs.mounts.state(id),
      readonly,
      host: options.host ?? hostname(),
      conflictCopies: new Set(),
      actor: options.actor,
    };
    let policy: BothChanged = "remote";
    if (!known) {
      if (!exists) await afs.workspaces.create(workspace, { description: `mounted from ${dir}` });
      else if (options.prefer) policy = options.prefer;
      else await refuseDiffering(ctx, dir);
    }
    const mount = new Mount(afs, ctx, record, options.debounceMs ?? 50);
    mount.policy = policy;
    // Conflicts are counted over every run of this mount.
    mount.info.conflicts = known?.report?.conflicts ?? 0;
    // The watcher opens first, so nothing changed during the first sync is missed.
    mount.watcher = await DirWatcher.open(dir, { onChange: () => mount.schedule() });
    try {
      await afs.mounts.register(record);
      await mount.report();
      mount.lastSeq = known ? await ctx.state.lastSeq() : 0;
      await mount.exclusive(async () => {
        // The whole tree is reconciled: only the newest sequence number matters (the revision is it).
        const info = await afs.workspaces.get(workspace);
        mount.workspaceId = info.id;
        const seq = info.revision;
        mount.note(await reconcile(ctx, [ROOT], policy));
        await mount.saveSeq(seq);
      });
      await mount.flush();
      mount.policy = "remote";
    } catch (e) {
      mount.watcher.close();
      if (!known) await afs.mounts.forget(id);
      throw e;
    }
    // Events arrive already batched: no need to let them settle like a burst of saves on disk.
    mount.follower = afs.events.follow(workspace, mount.lastSeq, () => mount.schedule(REMOTE_SETTLE_MS));
    mount.checkTimer = setInterval(() => void mount.exclusive(() => mount.workspaceLives()), WORKSPACE_CHECK_MS);
    mount.checkTimer.unref();
    mount.info.state = "running";
    await mount.report();
    return mount;
  }

  status(): MountStatus {
    return { ...this.info, conflictPaths: [...this.info.conflictPaths], pending: this.again.size + this.held.size };
  }

  /**
   * Uploads what is pending and applies what arrived, until both sides agree (or 20 rounds pass).
   * Every change made on disk before the flush begins is looked at, settled or not: the watcher's
   * take() waits for what the kernel has yet to deliver, whatever the debounce.
   */
  async flush(): Promise<MountStatus> {
    await this.exclusive(async () => {
      // Stamped when the flush begins, after whatever ran before it: this is what it vouches for.
      const began = Date.now();
      for (let i = 0; i < MAX_FLUSH_ROUNDS && (await this.round()); i++);
      this.info.flushed = began;
      await this.report();
    });
    return this.status();
  }

  /** Flushes, then stops watching and following; the directory keeps its files and the state is kept. */
  stop(): Promise<MountStatus> {
    if (this.info.state === "stopped") return Promise.resolve(this.status());
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<MountStatus> {
    // A round the watcher asked for meanwhile would run after the flush, against a closed watcher
    // and perhaps a closed engine, call that an error and retry every second: the process never ends.
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    try {
      if (!this.gone) await this.flush();
    } finally {
      this.quiet();
      this.info.state = "stopped";
      await this.report().catch(() => {});
    }
    return this.status();
  }

  /** Stops every source of rounds: timers, the event follower, the watcher. */
  private quiet(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.checkTimer) clearInterval(this.checkTimer);
    this.timer = null;
    this.checkTimer = null;
    this.follower?.close();
    this.watcher?.close();
  }

  /**
   * Whether the workspace mounted is still there (under its name, with its id). When it is not, the
   * mount ends in error saying so and what to do; the directory keeps its files. A store that cannot
   * be reached says nothing here (the rounds report it and retry).
   */
  private async workspaceLives(): Promise<boolean> {
    if (this.gone) return false;
    if (this.info.state === "stopped") return true;
    const { workspace } = this.ctx;
    let id: string | null;
    try {
      id = (await this.afs.workspaces.get(workspace)).id;
    } catch (e) {
      if (!isAfsError(e) || e.code !== "NOT_FOUND") return true;
      id = null;
    }
    if (id === this.workspaceId) return true;
    const dir = this.info.dir;
    const what = id === null ? "was deleted" : "was deleted and created again";
    this.gone =
      `workspace ${workspace} ${what}; ${dir} keeps its files but is no longer synced: run afs unmount ${dir}, ` +
      `then afs mount ${workspace} ${dir} to ${id === null ? "create it again from the directory" : "sync with the new one"}, or mount another workspace there`;
    this.quiet();
    this.again.clear();
    this.held.clear();
    this.info.state = "error";
    this.info.lastError = this.gone;
    await this.report().catch(() => {});
    return false;
  }

  /** Writes this sync's account to the mount table (one row), for `afs status` in any process. */
  private async report(): Promise<void> {
    const s = this.status();
    const report: MountReport = {
      state: s.state,
      pid: process.pid,
      pending: s.pending,
      conflicts: s.conflicts,
      lastSync: s.lastSync,
      lastError: s.lastError,
      flushed: s.flushed,
      at: Date.now(),
    };
    await this.afs.mounts.report(s.id, report);
  }

  /** Runs sync work one piece at a time (the background rounds, flush, start). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  private schedule(delay = this.debounceMs): void {
    if (this.timer || this.queued || this.stopping !== null || this.info.state === "stopped" || this.gone) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // One round waiting behind a long one (the first sync of a big tree) is enough: it takes
      // whatever changed meanwhile. Without this, every debounce queued another empty round.
      this.queued = true;
      void this.exclusive(async () => {
        this.queued = false;
        if (this.stopping !== null) return; // the stop's flush took what this round would have
        for (let i = 0; i < MAX_FLUSH_ROUNDS && (await this.round()); i++);
        // A path that could not be settled (locked, unreadable, changing) is tried again later.
        if (this.again.size > 0) this.schedule(RETRY_AFTER_ERROR_MS);
      }).catch(() => {});
    }, delay);
  }

  /** One round: what the watcher and the event log say changed, plus what waits. False when nothing moved. */
  private async round(): Promise<boolean> {
    if (this.info.state === "stopped" || this.gone || !this.watcher) return false;
    // What the watcher hands over waits in `again` until a round settles it: a round that fails
    // (the store unreachable, say) loses nothing.
    let waiting: string[] = [];
    try {
      const taken = await this.watcher.take();
      const local = taken.complete ? taken.paths : [ROOT];
      for (const p of local) this.again.add(p);
      const { paths: remote, seq } = await this.remoteChanges();
      const fresh = local.length + remote.length;
      waiting = [...this.again];
      const targets = [...remote, ...waiting];
      if (targets.length === 0) {
        // The events passed were this mount's own: past them for good, or the next round (a stop,
        // say) would find them again, no longer marked own, and reconcile every path they touched.
        await this.saveSeq(seq);
        return false;
      }
      if (targets.some((p) => IGNORE_FILES.includes(baseName(p)))) this.ctx.local.forgetIgnoreRules();
      this.again.clear();
      for (const p of targets) this.held.delete(p);
      const result = await reconcile(this.ctx, targets, this.policy);
      this.note(result);
      await this.saveSeq(seq);
      if (this.info.state === "error") this.info.state = "running";
      // Everything settled: an error reported earlier (a file unreadable then, the store away) is over.
      if (result.errors.length === 0 && this.again.size === 0) this.info.lastError = null;
      await this.report();
      // Only waiting paths, and none settled: another round now would find the same.
      return fresh > 0 || result.uploaded + result.downloaded + result.conflicts.length > 0;
    } catch (e) {
      for (const p of waiting) this.again.add(p);
      if (!(await this.workspaceLives())) return false;
      this.info.lastError = e instanceof Error ? e.message : String(e);
      this.info.state = "error";
      await this.report().catch(() => {});
      this.schedule(RETRY_AFTER_ERROR_MS);
      return false;
    }
  }

  private note(r: RoundResult): void {
    for (const p of r.again) this.again.add(p);
    for (const p of r.held) this.held.add(p);
    if (r.own) this.own.push(r.own);
    this.info.uploaded += r.uploaded;
    this.info.downloaded += r.downloaded;
    this.info.conflicts += r.conflicts.length;
    this.info.conflictPaths = [...this.info.conflictPaths, ...r.conflicts].slice(-100);
    this.info.lastSync = Date.now();
    const err = r.errors[0];
    if (err) this.info.lastError = `${err.path}: ${err.message}`;
  }

  /** The paths the workspace's events after the last one applied touched, and the newest sequence. */
  private async remoteChanges(): Promise<{ paths: string[]; seq: number }> {
    const paths = new Set<string>();
    let after = this.lastSeq;
    for (;;) {
      const page = await this.afs.events.list(this.ctx.workspace, { after, limit: EVENT_PAGE });
      // A checkpoint folds the live state without changing it; a restore changes everything.
      for (const e of page.events) {
        if (e.op === "checkpoint" || this.own.some((o) => e.seq >= o.from && e.seq <= o.to)) continue;
        paths.add(e.path);
      }
      after = page.next;
      if (!page.more) break;
    }
    this.own = this.own.filter((o) => o.to > after);
    return { paths: [...paths], seq: after };
  }

  private async saveSeq(seq: number): Promise<void> {
    if (seq === this.lastSeq) return;
    this.lastSeq = seq;
    await this.ctx.state.apply({ lastSeq: seq });
  }
}

/** A first mount of two sides holding differing files, without `prefer`: refused, saying what differs. */
async function refuseDiffering(ctx: SyncContext, dir: string): Promise<void> {
  const { differing } = await reconcile(ctx, [ROOT], "refuse");
  if (differing.length === 0) return;
  const shown = differing.slice(0, 5).join(", ");
  const more = differing.length > 5 ? ` and ${differing.length - 5} more` : "";
  throw new AfsError(
    "CONFLICT",
    `${dir} and workspace ${ctx.workspace} both hold files that differ (${differing.length}: ${shown}${more}); ` +
      `choose which side stays with prefer "local" or "remote" (afs mount --prefer local|remote): the other side's versions are kept beside them as conflict copies`,
    { dir, workspace: ctx.workspace, differing: differing.length, paths: differing.slice(0, 20) },
  );
}
