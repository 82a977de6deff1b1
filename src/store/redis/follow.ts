// Following event streams on Redis: one dedicated connection per store blocks in XREAD over every
// followed workspace's stream, so an event appended through any process wakes its followers within
// milliseconds; each follower then reads its own events (XRANGE on the shared connection) a batch
// at a time from the last one it delivered, which is also how it catches up after a failure.
import type { EventFollower, EventRecord } from "../store.js";
import { arr, str } from "./client.js";
import type { RedisClientSlice, Reply } from "./connect.js";

/** How long one XREAD blocks; a change of the followed streams also ends it early (CLIENT UNBLOCK). */
const BLOCK_MS = 1_000;
/** An XREAD with no reply this long after its block ended is on a dead connection: start a new one. */
const STUCK_MS = BLOCK_MS + 4_000;
/** Events per read, as in pollEvents. */
const BATCH = 1000;
/** Pauses after consecutive failures (of the blocking read or of a follower's read), capped at the last. */
const RETRY_MS = [25, 50, 100, 250, 500, 1_000];

type OnEvents = (events: EventRecord[]) => Promise<void> | void;
type List = (afterSeq: number, limit: number) => Promise<EventRecord[]>;

interface Follower {
  stream: string;
  seq: number;
  list: List;
  onEvents: OnEvents;
  closed: boolean;
  /** A read-and-deliver round is under way; `again` asks it for one more when it ends. */
  running: boolean;
  again: boolean;
  failures: number;
  timer?: NodeJS.Timeout;
}

export interface FollowDeps {
  /** A new connection of the store's kind, used only for blocking reads. */
  open(): Promise<RedisClientSlice>;
  /** Sends CLIENT UNBLOCK for a connection id over the shared connection; the number unblocked. */
  unblock(id: number): Promise<number>;
}

export class RedisFollowers {
  private readonly followers = new Set<Follower>();
  /** Each followed stream with the newest id a blocking read reported; XREAD waits for ids after it. */
  private readonly latest = new Map<string, string>();
  private blocker: RedisClientSlice | null = null;
  /** The blocking connection's CLIENT ID while an XREAD is out on it. */
  private blockedId: number | null = null;
  /** Bumped when the followed streams change; `sent` is the generation the XREAD out now was built from. */
  private generation = 0;
  private sent = -1;
  private looping = false;
  private closed = false;

  constructor(private readonly deps: FollowDeps) {}

  follow(stream: string, afterSeq: number, list: List, onEvents: OnEvents): EventFollower {
    const f: Follower = {
      stream,
      seq: afterSeq,
      list,
      onEvents,
      closed: false,
      running: false,
      again: false,
      failures: 0,
    };
    this.followers.add(f);
    const from = `${Math.max(0, Math.floor(afterSeq))}-0`;
    const known = this.latest.get(stream);
    // The lower id: XREAD answers at once if the stream is already past it, which only wakes readers.
    if (known === undefined || seqOf(from) < seqOf(known)) {
      this.latest.set(stream, from);
      this.changed();
    }
    this.wake(f);
    this.start();
    return {
      close: () => {
        f.closed = true;
        clearTimeout(f.timer);
        this.followers.delete(f);
        if (![...this.followers].some((o) => o.stream === stream)) this.latest.delete(stream);
      },
    };
  }

  /** Stops every follower and drops the blocking connection (its XREAD out now fails and is ignored). */
  close(): void {
    this.closed = true;
    for (const f of this.followers) {
      f.closed = true;
      clearTimeout(f.timer);
    }
    this.followers.clear();
    this.latest.clear();
    this.blocker?.destroy();
    this.blocker = null;
  }

  private start(): void {
    if (this.looping || this.closed) return;
    this.looping = true;
    void this.loop().finally(() => {
      this.looping = false;
      // A follower may have come between the loop's last check and now.
      if (this.latest.size > 0) this.start();
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.closed && this.latest.size > 0) {
      try {
        const woken = await this.blockingRead();
        if (failures > 0) {
          // Back after a failure: every follower reads once, whatever it missed meanwhile.
          for (const f of this.followers) this.wake(f);
          failures = 0;
        }
        for (const stream of woken) for (const f of this.followers) if (f.stream === stream) this.wake(f);
      } catch {
        if (this.closed) return;
        failures++;
        await pause(RETRY_MS[Math.min(failures, RETRY_MS.length) - 1] as number);
      }
    }
  }

  /** One XREAD over every followed stream; the streams that have news. */
  private async blockingRead(): Promise<string[]> {
    this.blocker ??= await this.deps.open();
    const blocker = this.blocker;
    const streams = [...this.latest];
    this.sent = this.generation;
    // One connection answers in order, so the id comes back before the XREAD blocks; a server that
    // refuses CLIENT ID (some managed services) only loses the early unblock.
    const id = blocker.sendCommand<Reply>(["CLIENT", "ID"]).then(Number, () => null);
    const read = blocker.sendCommand<Reply>([
      "XREAD",
      "COUNT",
      String(BATCH),
      "BLOCK",
      String(BLOCK_MS),
      "STREAMS",
      ...streams.map(([key]) => key),
      ...streams.map(([, last]) => last),
    ]);
    read.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      this.blockedId = await id;
      // The followed streams changed between building this read and its id coming back.
      if (this.sent !== this.generation) void this.interrupt();
      const stuck = new Promise<"stuck">((resolve) => {
        timer = setTimeout(() => resolve("stuck"), STUCK_MS);
      });
      const reply = await Promise.race([read, stuck]);
      if (reply === "stuck") {
        if (this.blocker === blocker) this.blocker = null;
        blocker.destroy();
        throw new Error("no reply to XREAD");
      }
      const woken: string[] = [];
      for (const item of arr(reply)) {
        const [key, entries] = arr(item);
        const stream = str(key ?? null) ?? "";
        const last = arr(entries ?? null).at(-1);
        const lastId = last === undefined ? null : str(arr(last)[0] ?? null);
        if (lastId === null || !this.latest.has(stream)) continue;
        if (seqOf(lastId) > seqOf(this.latest.get(stream) as string)) this.latest.set(stream, lastId);
        woken.push(stream);
      }
      return woken;
    } finally {
      clearTimeout(timer);
      this.blockedId = null;
    }
  }

  /** The followed streams changed: end the XREAD out now, so the next one names them all. */
  private changed(): void {
    this.generation++;
    void this.interrupt();
  }

  private async interrupt(): Promise<void> {
    // CLIENT UNBLOCK may reach the server before the XREAD it is meant for: try again briefly.
    // Without it the new streams still join within BLOCK_MS.
    for (let i = 0; i < 20 && !this.closed; i++) {
      const id = this.blockedId;
      if (id === null || this.sent === this.generation) return;
      if ((await this.deps.unblock(id).catch(() => 0)) === 1) return;
      await pause(5);
    }
  }

  private wake(f: Follower): void {
    if (f.closed) return;
    if (f.running) {
      f.again = true;
      return;
    }
    void this.deliver(f);
  }

  /** Reads and delivers everything after the follower's last event; on a failure, tries again later from there. */
  private async deliver(f: Follower): Promise<void> {
    f.running = true;
    clearTimeout(f.timer);
    try {
      do {
        f.again = false;
        for (;;) {
          const batch = await f.list(f.seq, BATCH);
          if (f.closed || batch.length === 0) break;
          await f.onEvents(batch);
          f.seq = (batch.at(-1) as EventRecord).seq;
          if (batch.length < BATCH) break;
        }
      } while (f.again && !f.closed);
      f.failures = 0;
    } catch {
      f.failures++;
      if (!f.closed) {
        f.timer = setTimeout(() => this.wake(f), RETRY_MS[Math.min(f.failures, RETRY_MS.length) - 1]);
        f.timer.unref();
      }
    } finally {
      f.running = false;
    }
  }
}

const seqOf = (id: string): number => Number(id.split("-")[0]);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
