// A bounded in-memory event log: a ring that keeps the newest events so a volume that lives for
// hours holds a fixed amount of memory, while sequence numbers (the revision) keep counting.
import { AfsError } from "../core/errors.js";

export const DEFAULT_MAX_EVENTS = 10_000;

export interface EventLogOptions {
  /** How many of the newest events are kept; older ones are dropped (default 10,000). */
  maxEvents?: number;
}

export class EventLog<E extends { seq: number }> {
  readonly maxEvents: number;
  // Event `seq` sits at ring[(seq - 1) % maxEvents]: sequence numbers are contiguous, so the slot
  // follows from the number and nothing is ever shifted.
  private readonly ring: E[] = [];
  private latest = 0;

  constructor(options: EventLogOptions = {}) {
    const max = options.maxEvents ?? DEFAULT_MAX_EVENTS;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new AfsError("INVALID_ARGUMENT", `maxEvents must be a whole number of at least 1; got ${max}`);
    }
    this.maxEvents = max;
  }

  /** The sequence number of the latest event (0 before any), counting dropped ones. */
  get revision(): number {
    return this.latest;
  }

  /**
   * The sequence number of the oldest event still held (revision + 1 when none is). A reader that
   * last saw `afterSeq` missed events when afterSeq + 1 < oldestSeq.
   */
  get oldestSeq(): number {
    return Math.max(1, this.latest - this.maxEvents + 1);
  }

  /** Appends an event under the next sequence number, dropping the oldest beyond the bound. */
  append(event: Omit<E, "seq">): number {
    const seq = this.latest + 1;
    this.ring[(seq - 1) % this.maxEvents] = { ...event, seq } as E;
    this.latest = seq;
    return seq;
  }

  /** The retained events after sequence number `afterSeq`, oldest first. */
  events(afterSeq = 0): E[] {
    const from = Math.max(Math.floor(Number.isNaN(afterSeq) ? 0 : afterSeq) + 1, this.oldestSeq);
    const out: E[] = [];
    for (let seq = from; seq <= this.latest; seq++) out.push(this.ring[(seq - 1) % this.maxEvents] as E);
    return out;
  }
}
