// Following a workspace's event log by polling it: how a store with no push channel (SQLite, where
// other processes write the same file) delivers new events. A poll is one indexed range read.
import type { EventFollower, EventRecord } from "./store.js";

/** How often the log is read; a change made by another process is seen within about this long. */
export const FOLLOW_POLL_MS = 25;
const BATCH = 1000;

export function pollEvents(
  list: (afterSeq: number, limit: number) => Promise<EventRecord[]>,
  afterSeq: number,
  onEvents: (events: EventRecord[]) => Promise<void> | void,
  intervalMs = FOLLOW_POLL_MS,
): EventFollower {
  let seq = afterSeq;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
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
    if (!closed) schedule();
  };
  const schedule = (): void => {
    timer = setTimeout(() => void tick(), intervalMs);
    timer.unref();
  };
  schedule();
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}
