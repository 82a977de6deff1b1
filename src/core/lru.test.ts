import { describe, expect, it } from "vitest";
import { WeightedLru } from "./lru.js";

describe("WeightedLru", () => {
  it("drops the least recently used past its budget, counts a replaced value once, and refuses one heavier than the budget", () => {
    const lru = new WeightedLru<string, string>(10, (v) => v.length);
    lru.set("a", "xxxx");
    lru.set("b", "yyyy");
    lru.set("a", "xxx"); // replaced: a weighs 3 now, and is the most recent
    lru.set("c", "zzz"); // 4 + 3 + 3 = 10: everything fits
    expect(lru.size).toBe(3);
    lru.set("d", "w"); // 11: b, the least recent, goes
    expect(lru.get("b")).toBeUndefined();
    expect([lru.get("a"), lru.get("c"), lru.get("d")]).toEqual(["xxx", "zzz", "w"]);
    lru.set("big", "q".repeat(11));
    expect(lru.get("big")).toBeUndefined();
    expect(lru.size).toBe(3);
  });
});
