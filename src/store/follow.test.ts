// The polling follower's timing, on a log whose commit becomes visible a moment after the file event
// that wakes it (SQLite's shared-memory index is updated after the WAL's last write).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { pollEvents, WATCHED_POLL_MS } from "./follow.js";
import type { EventRecord } from "./store.js";

const event = (seq: number): EventRecord =>
  ({ workspace: "w", seq, time: 0, op: "write", path: `/f${seq}`, actor: "a", surface: "cli" }) as EventRecord;

describe("pollEvents with a watch", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("a wake read just before the commit shows still delivers it well before the safety poll", async () => {
    const log: EventRecord[] = [];
    const delivered: number[] = [];
    let wake = (): void => {};
    const follower = pollEvents(
      async (after) => log.filter((e) => e.seq > after),
      0,
      (batch) => void delivered.push(...batch.map((e) => e.seq)),
      {
        watch: (w) => {
          wake = w;
          return () => {};
        },
      },
    );
    // The file event comes first; the commit is visible only 3 ms later, after the woken read.
    wake();
    await vi.advanceTimersByTimeAsync(2);
    log.push(event(1));
    await vi.advanceTimersByTimeAsync(100);
    expect(delivered).toEqual([1]);
    // Once the rechecks are over, a commit with no wake waits for the safety poll.
    await vi.advanceTimersByTimeAsync(500);
    log.push(event(2));
    await vi.advanceTimersByTimeAsync(WATCHED_POLL_MS - 400);
    expect(delivered).toEqual([1]);
    await vi.advanceTimersByTimeAsync(WATCHED_POLL_MS);
    expect(delivered).toEqual([1, 2]);
    follower.close();
  });
});
