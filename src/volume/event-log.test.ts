import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_EVENTS, EventLog } from "./event-log.js";

interface Ev {
  seq: number;
  path: string;
}

const fill = (log: EventLog<Ev>, n: number): void => {
  for (let i = 1; i <= n; i++) log.append({ path: `/f${i}` });
};

describe("EventLog", () => {
  it("numbers events from 1 and returns those after a sequence number", () => {
    const log = new EventLog<Ev>();
    expect(log.revision).toBe(0);
    expect(log.oldestSeq).toBe(1);
    expect(log.events()).toEqual([]);
    expect(log.append({ path: "/a" })).toBe(1);
    expect(log.append({ path: "/b" })).toBe(2);
    expect(log.events()).toEqual([
      { seq: 1, path: "/a" },
      { seq: 2, path: "/b" },
    ]);
    expect(log.events(1)).toEqual([{ seq: 2, path: "/b" }]);
    expect(log.events(2)).toEqual([]);
    expect(log.events(-5)).toHaveLength(2);
  });

  it("keeps only the newest maxEvents while the revision keeps counting", () => {
    const log = new EventLog<Ev>({ maxEvents: 3 });
    fill(log, 10);
    expect(log.revision).toBe(10);
    expect(log.oldestSeq).toBe(8);
    expect(log.events().map((e) => e.seq)).toEqual([8, 9, 10]);
    expect(log.events().map((e) => e.path)).toEqual(["/f8", "/f9", "/f10"]);
    // A reader that last saw 5 can tell it missed 6 and 7.
    expect(5 + 1 < log.oldestSeq).toBe(true);
    expect(log.events(5).map((e) => e.seq)).toEqual([8, 9, 10]);
    expect(log.events(8).map((e) => e.seq)).toEqual([9, 10]);
  });

  it("holds at most the default bound however long it runs", () => {
    const log = new EventLog<Ev>();
    fill(log, DEFAULT_MAX_EVENTS + 2_500);
    expect(DEFAULT_MAX_EVENTS).toBe(10_000);
    expect(log.revision).toBe(DEFAULT_MAX_EVENTS + 2_500);
    const kept = log.events();
    expect(kept).toHaveLength(DEFAULT_MAX_EVENTS);
    expect(kept[0]?.seq).toBe(2_501);
    expect(log.oldestSeq).toBe(2_501);
  });

  it("refuses a bound that is not a positive whole number", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new EventLog<Ev>({ maxEvents: bad })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });
});
