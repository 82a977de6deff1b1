// Following a workspace's event log by polling it: how a store with no push channel (SQLite, where
// other processes write the same file) delivers new events. A poll is one indexed range read.
import type { EventFollower, EventRecord } from "./store.js";

/** How often the log is read; a change made by another process is seen within about this long. */
export const FOLLOW_POLL_MS = 25;
/**
 * How often it is read when a watch says when the log may have grown: only a safety net then.
 * Reading every 25 ms kept an idle follower (a mount doing nothing) at ~1% of a core.
 */
export const WATCHED_POLL_MS = 1_000;
const BATCH = 1000;
/**
 * After a wake, read again after these delays (each wake starts them over). A commit's last step
 * updates SQLite's shared-memory index, which makes no file event: a read between the WAL's last
 * write and that update still sees the old snapshot, and without a second look the events waited
 * for the 1 s safety poll (seen under load: a listen notification 1,011 ms late).
 */
const RECHECK_MS = [5, 25, 100, 250];

export interface PollOptions {
  intervalMs?: number;
  /**
   * Starts watching what a write to the log changes (the SQLite file and its WAL), calling `wake`
   * on each change and `lost` if the watch breaks (polled as usual from then on); returns how to
   * stop, or null when it cannot watch.
   */
  watch?: (wake: () => void, lost: () => void) => (() => void) | null;
}

export function pollEvents(
  list: (afterSeq: number, limit: number) => Promise<EventRecord[]>,
  afterSeq: number,
  onEvents: (events: EventRecord[]) => Promise<void> | void,
  options: PollOptions = {},
): EventFollower {
  let seq = afterSeq;
  let closed = false;
  let running = false;
  let wokenWhileRunning = false;
  /** The next of RECHECK_MS after a wake; past its end, no recheck is due. */
  let recheck = RECHECK_MS.length;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    running = true;
    wokenWhileRunning = false;
    try {
      for (;;) {
        const batch = await list(seq, BATCH);
        if (closed || batch.length === 0) break;
        await onEvents(batch);
        seq = (batch.at(-1) as EventRecord).seq;
        if (batch.length < BATCH) break;
      }
    } catch {
      // Tried again on the next tick, from the last event delivered.
    }
    running = false;
    if (closed) return;
    if (wokenWhileRunning) schedule(0);
    else if (recheck < RECHECK_MS.length) schedule(RECHECK_MS[recheck++] as number);
    else schedule(interval);
  };
  const schedule = (delay: number): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void tick(), delay);
    timer.unref();
  };
  // One write touches the file several times: the wakes of one millisecond make one read.
  const wake = (): void => {
    if (closed) return;
    recheck = 0;
    if (running) wokenWhileRunning = true;
    else schedule(1);
  };
  const polled = options.intervalMs ?? FOLLOW_POLL_MS;
  let interval = polled;
  const unwatch =
    options.watch?.(wake, () => {
      interval = polled;
      wake();
    }) ?? null;
  if (unwatch) interval = WATCHED_POLL_MS;
  schedule(interval);
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      unwatch?.();
    },
  };
}
