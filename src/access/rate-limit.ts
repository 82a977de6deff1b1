// Per-server token buckets for the broker: operations per second and bytes per second. A bucket
// may go into debt by one large request (so a chunk bigger than a second's budget still passes
// once), and a refusal carries how long to wait.
import { AfsError } from "../core/errors.js";

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    /** Tokens added per second; also the bucket's capacity (one second of burst). */
    readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(perSecond > 0)) throw new AfsError("INVALID_ARGUMENT", `a rate must be above 0 per second; got ${perSecond}`);
    this.tokens = perSecond;
    this.last = now();
  }

  /** Milliseconds until a request may pass (0: now). */
  waitMs(): number {
    this.refill();
    return this.tokens > 0 ? 0 : Math.ceil((-this.tokens / this.perSecond) * 1000) + 1;
  }

  /** Spends `n` tokens when the bucket is not empty (it may go negative); false when empty. */
  take(n: number): boolean {
    if (this.waitMs() > 0) return false;
    this.tokens -= n;
    return true;
  }

  /** Spends `n` tokens whatever the balance (bytes counted after the fact). */
  spend(n: number): void {
    this.refill();
    this.tokens -= n;
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }
}

export interface RateLimit {
  opsPerSecond: number;
  bytesPerSecond: number;
}

/** One pair of buckets per server. */
export class RateLimiter {
  private readonly buckets = new Map<string, { ops: TokenBucket; bytes: TokenBucket }>();

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one operation for `server`, or throws QUOTA_EXCEEDED with `retryAfterMs`. */
  admit(server: string): void {
    const b = this.of(server);
    const wait = Math.max(b.ops.waitMs(), b.bytes.waitMs());
    if (wait > 0 || !b.ops.take(1)) {
      const retryAfterMs = Math.max(wait, b.ops.waitMs(), 1);
      const which =
        b.bytes.waitMs() > 0 ? `${this.limit.bytesPerSecond} bytes` : `${this.limit.opsPerSecond} operations`;
      throw new AfsError(
        "QUOTA_EXCEEDED",
        `rate limit reached (${which} per second for this server); retry after ${retryAfterMs} ms`,
        { retryAfterMs },
      );
    }
  }

  /** Counts bytes moved by an admitted operation. */
  spendBytes(server: string, n: number): void {
    if (n > 0) this.of(server).bytes.spend(n);
  }

  forget(server: string): void {
    this.buckets.delete(server);
  }

  private of(server: string): { ops: TokenBucket; bytes: TokenBucket } {
    let b = this.buckets.get(server);
    if (!b) {
      b = {
        ops: new TokenBucket(this.limit.opsPerSecond, this.now),
        bytes: new TokenBucket(this.limit.bytesPerSecond, this.now),
      };
      this.buckets.set(server, b);
    }
    return b;
  }
}
