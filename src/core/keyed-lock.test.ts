import { describe, expect, it } from "vitest";
import { KeyedLock } from "./keyed-lock.js";

const tick = (): Promise<void> => new Promise((done) => setImmediate(done));

describe("KeyedLock", () => {
  it("runs holders of one key one at a time, in arrival order, and other keys alongside", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    let releaseFirst = (): void => {};
    const first = lock.run(["a"], async () => {
      order.push("a1 start");
      await new Promise<void>((done) => {
        releaseFirst = done;
      });
      order.push("a1 end");
    });
    const second = lock.run(["a"], async () => {
      order.push("a2");
    });
    const other = lock.run(["b"], async () => {
      order.push("b");
    });
    await other;
    await tick();
    expect(order).toEqual(["a1 start", "b"]);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["a1 start", "b", "a1 end", "a2"]);
    expect(lock.size).toBe(0);
  });

  it("releases its keys when the holder throws", async () => {
    const lock = new KeyedLock();
    await expect(
      lock.run(["x", "y"], async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(lock.size).toBe(0);
    expect(await lock.run(["y", "x"], async () => "again")).toBe("again");
  });
});
