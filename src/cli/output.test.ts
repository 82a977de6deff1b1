import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { drained } from "./output.js";

describe("drained", () => {
  it("resolves on drain or close, and leaves no listener behind however often it waits", async () => {
    const stream = new EventEmitter();
    for (let i = 0; i < 50; i++) {
      const waiting = drained(stream);
      stream.emit(i % 2 === 0 ? "drain" : "close");
      await waiting;
    }
    expect(stream.listenerCount("drain") + stream.listenerCount("close")).toBe(0);
  });
});
