// `afs.events`: a workspace's event log, the spine later features read (watches, mounts, history,
// the console, MCP resource notifications): a page at a time with a cursor, or followed from a
// sequence number as writes land through any process or machine sharing the store.
import { AfsError } from "../../core/errors.js";
import { type EventFollower, type EventRecord, type Outcome, outcomeOf } from "../../core/event.js";
import { isWithin, normalizePath } from "../../core/paths.js";
import { type Engine, requireWorkspace } from "./engine.js";

export type { EventFollower, EventRecord };

export interface EventPage {
  /** Oldest first, every one after the `after` asked for that passes the filter. */
  events: EventRecord[];
  /**
   * Pass as `after` for the next page: the last event looked at (`after` itself when none). With a
   * filter that is past the last event returned when a page's scan ended on events that did not pass.
   */
  next: number;
  /** Whether the log holds events after `next` (the next page may still find none that pass). */
  more: boolean;
}

/** Which events a page keeps; every field given must hold. */
export interface EventFilter {
  /** This path or anything below it (a directory's subtree). */
  path?: string;
  actor?: string;
  /** Which way the change came: "mcp", "cli", "mount", … */
  surface?: string;
  /** What the change did (outcomeOf): "created", "deleted", … */
  outcome?: Outcome;
  /** Any of these operations ("write", "replace", "checkpoint", …). */
  ops?: readonly string[];
  /** At or after this time (ms since the epoch). */
  since?: number;
}

const DEFAULT_EVENT_PAGE = 1000;
const DEFAULT_RECENT = 50;
const MAX_EVENT_PAGE = 10_000;
/**
 * A filtered page stops looking after this many events and hands back a cursor, so a rare match in
 * a long log costs the caller more pages, never one unbounded call.
 */
const MAX_EVENTS_SCANNED = 50_000;

const positiveInteger = (name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer from ${min}` : `an integer from ${min} to ${max}`;
    throw new AfsError("INVALID_ARGUMENT", `${name} must be ${range}, not ${value}`);
  }
  return value;
};

/** The filter as one predicate (null: keeps everything, so a page reads the log once, unfiltered). */
function matcher(filter: EventFilter): ((e: EventRecord) => boolean) | null {
  const tests: ((e: EventRecord) => boolean)[] = [];
  if (filter.path !== undefined) {
    const path = normalizePath(filter.path);
    tests.push((e) => isWithin(e.path, path));
  }
  if (filter.actor !== undefined) tests.push((e) => e.actor === filter.actor);
  if (filter.surface !== undefined) tests.push((e) => e.surface === filter.surface);
  if (filter.outcome !== undefined) tests.push((e) => outcomeOf(e) === filter.outcome);
  if (filter.ops !== undefined) {
    const ops = new Set(filter.ops);
    tests.push((e) => ops.has(e.op));
  }
  if (filter.since !== undefined) {
    const since = positiveInteger("since", filter.since, 0);
    tests.push((e) => e.time >= since);
  }
  return tests.length === 0 ? null : (e) => tests.every((t) => t(e));
}

export class Events {
  constructor(private readonly engine: Engine) {}

  /**
   * Events after sequence number `after` (default 0: from the start), at most `limit` (default
   * 1000), those passing `filter` only.
   */
  async list(workspace: string, options: { after?: number; limit?: number } & EventFilter = {}): Promise<EventPage> {
    const { after: from = 0, limit: asked = DEFAULT_EVENT_PAGE, ...filter } = options;
    const after = positiveInteger("after (a sequence number)", from, 0);
    const limit = positiveInteger("limit", asked, 1, MAX_EVENT_PAGE);
    const keep = matcher(filter);
    await requireWorkspace(this.engine, workspace);
    const { store } = this.engine;
    if (!keep) {
      const events = await store.listEvents(workspace, after, limit + 1);
      const page = events.slice(0, limit);
      return { events: page, next: page[page.length - 1]?.seq ?? after, more: events.length > limit };
    }
    const kept: EventRecord[] = [];
    let next = after;
    let scanned = 0;
    scan: while (kept.length < limit && scanned < MAX_EVENTS_SCANNED) {
      const size = Math.min(MAX_EVENT_PAGE, MAX_EVENTS_SCANNED - scanned);
      const batch = await store.listEvents(workspace, next, size);
      for (const e of batch) {
        scanned++;
        next = e.seq;
        if (keep(e) && kept.push(e) === limit) break scan;
      }
      if (batch.length < size) break;
    }
    return { events: kept, next, more: await this.hasAfter(workspace, next) };
  }

  /**
   * The newest `limit` events (default 50) passing `filter`, oldest first: the tail `afs log` shows.
   * Reads the log backwards a page at a time, looking at no more than MAX_EVENTS_SCANNED events.
   */
  async recent(workspace: string, options: { limit?: number } & EventFilter = {}): Promise<EventRecord[]> {
    const { limit: asked = DEFAULT_RECENT, ...filter } = options;
    const limit = positiveInteger("limit", asked, 1, MAX_EVENT_PAGE);
    const keep = matcher(filter);
    const { revision } = await requireWorkspace(this.engine, workspace);
    const { store } = this.engine;
    if (!keep) return store.listEvents(workspace, Math.max(0, revision - limit), limit);
    const kept: EventRecord[] = [];
    let high = revision;
    scan: while (high > 0 && kept.length < limit && revision - high < MAX_EVENTS_SCANNED) {
      const low = Math.max(0, high - MAX_EVENT_PAGE);
      const batch = await store.listEvents(workspace, low, high - low);
      for (let i = batch.length - 1; i >= 0; i--) {
        const e = batch[i] as EventRecord;
        // Older events only get older: nothing before `since` can pass.
        if (filter.since !== undefined && e.time < filter.since) break scan;
        if (keep(e) && kept.push(e) === limit) break scan;
      }
      high = low;
    }
    return kept.reverse();
  }

  /**
   * The newest `limit` events passing `filter` across these workspaces, in time order: one log of
   * many (`afs log` without -w, the console's /activity).
   */
  async recentAcross(
    workspaces: readonly string[],
    options: { limit?: number } & EventFilter = {},
  ): Promise<EventRecord[]> {
    const limit = options.limit ?? DEFAULT_RECENT;
    const recent = await Promise.all(workspaces.map((ws) => this.recent(ws, { ...options, limit })));
    return recent
      .flat()
      .sort((a, b) => a.time - b.time || a.seq - b.seq)
      .slice(-limit);
  }

  private async hasAfter(workspace: string, seq: number): Promise<boolean> {
    return (await this.engine.store.listEvents(workspace, seq, 1)).length > 0;
  }

  /**
   * Delivers the workspace's events after `after` as they are appended, by this process or any
   * other sharing the store (SQLite: polling its indexed log; Redis: XREAD on the workspace's
   * stream), in order and a batch at a time (the next waits for `onEvents` to settle). A failed
   * read is tried again from the last event delivered, until close().
   */
  follow(workspace: string, after: number, onEvents: (events: EventRecord[]) => Promise<void> | void): EventFollower {
    return this.engine.store.followEvents(workspace, after, onEvents);
  }

  /**
   * Follows every workspace: each from `from[name]` when given, else from where its log stands
   * when the follow starts; a workspace created since from its first event (looked for every
   * `everyMs`, default 1 s); a deleted one is dropped. `onEvents` gets one workspace's batch at a time.
   */
  followEvery(
    onEvents: (events: EventRecord[]) => Promise<void> | void,
    options: { from?: Readonly<Record<string, number>>; everyMs?: number } = {},
  ): EventFollower {
    const followers = new Map<string, EventFollower>();
    let closed = false;
    let looking = false;
    let first = true;
    const look = async (): Promise<void> => {
      if (looking || closed) return;
      looking = true;
      try {
        const now = await this.engine.store.listWorkspaces();
        if (closed) return;
        const names = new Set(now.map((w) => w.name));
        for (const w of now) {
          if (followers.has(w.name)) continue;
          const after = options.from?.[w.name] ?? (first ? w.revision : 0);
          followers.set(w.name, this.follow(w.name, after, onEvents));
        }
        for (const [name, follower] of followers) {
          if (names.has(name)) continue;
          follower.close();
          followers.delete(name);
        }
        first = false;
      } catch {
        // The store is away: the next look tries again.
      } finally {
        looking = false;
      }
    };
    void look();
    const timer = setInterval(() => void look(), options.everyMs ?? 1000);
    timer.unref();
    return {
      close() {
        closed = true;
        clearInterval(timer);
        for (const f of followers.values()) f.close();
        followers.clear();
      },
    };
  }
}
