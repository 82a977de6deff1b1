import { describe, expect, it } from "vitest";
import { AfsError } from "./errors.js";
import { pauseCap, RETRY, RETRY_POLICY, retryIfConflict, retryOnConflict } from "./retry.js";

describe("retryOnConflict", () => {
  it("tries until a try does not ask for another, pausing in between", async () => {
    const at: number[] = [];
    const value = await retryOnConflict(
      async (n) => {
        at.push(performance.now());
        return n < 5 ? RETRY : n;
      },
      { giveUp: () => new AfsError("TIMEOUT", "gave up") },
    );
    expect(value).toBe(5);
    expect(at).toHaveLength(6);
  });

  it("gives up with the caller's error, told how many tries over how long, once the budget is spent", async () => {
    let seen: { tries: number; ms: number } | undefined;
    const p = retryOnConflict(async () => RETRY, {
      budgetMs: 30,
      giveUp: (spent) => {
        seen = spent;
        return new AfsError("TIMEOUT", "too busy");
      },
    });
    await expect(p).rejects.toMatchObject({ code: "TIMEOUT", message: "too busy" });
    expect(seen?.ms).toBeGreaterThanOrEqual(30);
    expect(seen?.tries).toBeGreaterThan(1);
  });

  it("lets any other error through at once", async () => {
    let tries = 0;
    const p = retryOnConflict(
      async () => {
        tries++;
        throw new AfsError("NOT_FOUND", "gone");
      },
      { giveUp: () => new AfsError("TIMEOUT", "too busy") },
    );
    await expect(p).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(tries).toBe(1);
  });

  it("turns only a CONFLICT into another try", async () => {
    expect(await retryIfConflict(Promise.reject(new AfsError("CONFLICT", "lost")))).toBe(RETRY);
    await expect(retryIfConflict(Promise.reject(new AfsError("INVALID_ARGUMENT", "no")))).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    expect(await retryIfConflict(Promise.resolve(3))).toBe(3);
  });

  it("pauses grow from about a millisecond to a cap", () => {
    expect(pauseCap(0)).toBe(RETRY_POLICY.firstPauseMs);
    expect(pauseCap(3)).toBe(8 * RETRY_POLICY.firstPauseMs);
    expect(pauseCap(40)).toBe(RETRY_POLICY.maxPauseMs);
  });
});
