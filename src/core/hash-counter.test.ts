import { describe, expect, it } from "vitest";
import { sha256 } from "./hash.js";
import { HashCounter } from "./hash-counter.js";

describe("HashCounter", () => {
  it("tells new hashes from ones added before, as a Set does, across its table's growth", () => {
    const counter = new HashCounter();
    const set = new Set<string>();
    // 20,000 distinct hashes, each added twice or three times in a shuffled order: the table grows
    // several times (it starts at 4,096 slots), with hashes met again after each growth.
    const hashes = Array.from({ length: 20_000 }, (_, i) => sha256(`content ${i}`));
    const order = [...hashes, ...hashes, ...hashes.filter((_, i) => i % 3 === 0)];
    let seed = 7;
    for (let i = order.length - 1; i > 0; i--) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const j = seed % (i + 1);
      [order[i], order[j]] = [order[j] as string, order[i] as string];
    }
    for (const h of order) expect(counter.add(h)).toBe(!set.has(h) && set.add(h) !== undefined);
    expect(counter.size).toBe(20_000);
  });

  it("keeps a hash whose 64-bit prefix is zero apart from an empty slot (as the prefix 0…01)", () => {
    const counter = new HashCounter();
    const zero = "0".repeat(64);
    expect(counter.add(zero)).toBe(true);
    expect(counter.add(zero)).toBe(false);
    expect(counter.add(`${"0".repeat(15)}1${"f".repeat(48)}`)).toBe(false);
    expect(counter.add(`${"0".repeat(15)}2${"f".repeat(48)}`)).toBe(true);
    expect(counter.size).toBe(2);
  });
});
