import { describe, expect, it } from "vitest";
import { AfsError } from "../core/errors.js";
import { RateLimiter, TokenBucket } from "./rate-limit.js";

describe("rate limits", () => {
  it("a bucket refills over time and may go into debt by one large request", () => {
    let now = 0;
    const b = new TokenBucket(10, () => now);
    expect(b.take(25)).toBe(true); // one big request passes...
    expect(b.take(1)).toBe(false); // ...then the debt is paid back
    expect(b.waitMs()).toBe(1501);
    now = 1600;
    expect(b.take(1)).toBe(true);
  });

  it("each server has its own buckets, and a refusal says when to retry", () => {
    let now = 0;
    const r = new RateLimiter({ opsPerSecond: 2, bytesPerSecond: 100 }, () => now);
    r.admit("a");
    r.admit("a");
    let err: unknown;
    try {
      r.admit("a");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AfsError);
    expect(err).toMatchObject({ code: "QUOTA_EXCEEDED", details: { retryAfterMs: expect.any(Number) } });
    r.admit("b");
    now = 1000;
    r.admit("a");
    r.spendBytes("a", 500);
    expect(() => r.admit("a")).toThrow(/100 bytes per second/);
  });
});
