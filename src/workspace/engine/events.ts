// `afs.events`: a workspace's event log, the spine later features read (watches, mounts, history,
// the console, MCP resource notifications): a page at a time with a cursor, or followed from a
// sequence number as writes land through any process or machine sharing the store.
import { AfsError } from "../../core/errors.js";
import type { EventFollower, EventRecord } from "../../core/event.js";
import { type Engine, requireWorkspace } from "./engine.js";

export type { EventFollower, EventRecord };

export interface EventPage {
  /** Oldest first, every one after the `after` asked for. */
  events: EventRecord[];
  /** Pass as `after` for the next page: the last event's sequence number (`after` itself when none). */
  next: number;
}

export const DEFAULT_EVENT_PAGE = 1000;
export const MAX_EVENT_PAGE = 10_000;

export class Events {
  constructor(private readonly engine: Engine) {}

  /** Events after sequence number `after` (default 0: from the start), at most `limit` (default 1000). */
  async list(workspace: string, options: { after?: number; limit?: number } = {}): Promise<EventPage> {
    const after = options.after ?? 0;
    const limit = options.limit ?? DEFAULT_EVENT_PAGE;
    if (!Number.isInteger(after) || after < 0) {
      throw new AfsError("INVALID_ARGUMENT", `after must be a sequence number (an integer from 0), not ${after}`);
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_EVENT_PAGE) {
      throw new AfsError("INVALID_ARGUMENT", `limit must be an integer from 1 to ${MAX_EVENT_PAGE}, not ${limit}`);
    }
    await requireWorkspace(this.engine, workspace);
    const events = await this.engine.store.listEvents(workspace, after, limit);
    return { events, next: events[events.length - 1]?.seq ?? after };
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
}
