// The engine's event API on every store (AFS_TEST_STORES): a workspace's log listed a page at a
// time with a cursor, and followed from a sequence number, including writes made through another
// engine on the same store (another process or machine, in effect).
import { afterEach, describe, expect, it } from "vitest";
import { Afs, type EventRecord } from "../../src/workspace/afs.js";
import { tempDir } from "../helpers/tmp.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "./stores.js";

const write = async (afs: Afs, ws: string, path: string, text = path): Promise<void> => {
  await (await afs.workspaces.volume(ws)).writeFile(path, Buffer.from(text), { op: "write" });
};

/** Resolves with the events delivered once `done` holds for them, or rejects after a while. */
function collect(done: (seen: EventRecord[]) => boolean) {
  const seen: EventRecord[] = [];
  let settle: () => void = () => {};
  const arrived = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`only ${JSON.stringify(seen.map((e) => e.path))} arrived`)),
      10_000,
    );
    settle = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return {
    seen,
    arrived,
    onEvents: (events: EventRecord[]) => {
      seen.push(...events);
      if (done(seen)) settle();
    },
  };
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`afs.events on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;
    const open: Afs[] = [];
    const homes: (() => Promise<void>)[] = [];
    let n = 0;

    /** Two engines on one store, each in a home of its own, and a fresh workspace name. */
    async function pair(): Promise<{ a: Afs; b: Afs; ws: string }> {
      const home = await tempDir("afs-home-");
      homes.push(home.cleanup);
      const store = redis ? redis().url : `sqlite:${home.dir}/afs.db`;
      const a = await Afs.open({ home: home.dir, store, actor: "a" });
      const other = await tempDir("afs-home-");
      homes.push(other.cleanup);
      const b = await Afs.open({ home: other.dir, store, actor: "b" });
      open.push(a, b);
      return { a, b, ws: `events-${process.pid}-${++n}` };
    }

    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((afs) => afs.close()));
      await Promise.allSettled(homes.splice(0).map((cleanup) => cleanup()));
    });

    it("records the surface beside the actor: the engine's, or the one a volume names", async () => {
      const { a, ws } = await pair();
      await a.workspaces.create(ws);
      await write(a, ws, "/engine");
      await (await a.workspaces.volume(ws, "token:ci", "mcp")).writeFile("/mcp", Buffer.from("m"), { op: "write" });
      await a.checkpoints.create(ws, { name: "one" });
      const events = (await a.events.list(ws)).events.map((e) => [e.op, e.path, e.actor, e.surface]);
      expect(events).toEqual([
        ["write", "/engine", "a", "engine"],
        ["write", "/mcp", "token:ci", "mcp"],
        ["checkpoint", "/", "a", "engine"],
      ]);
      const cli = await Afs.open({ home: a.home, store: a.storeUrl, actor: "c", surface: "cli" });
      open.push(cli);
      await write(cli, ws, "/cli");
      expect((await cli.events.list(ws, { actor: "c" })).events.map((e) => e.surface)).toEqual(["cli"]);
    });

    it("lists the log a page at a time, the cursor leading to the next page", async () => {
      const { a, ws } = await pair();
      await a.workspaces.create(ws);
      for (const p of ["/1", "/2", "/3", "/4", "/5"]) await write(a, ws, p);

      const first = await a.events.list(ws, { limit: 2 });
      expect(first.events.map((e) => [e.seq, e.op, e.path, e.actor, e.workspace])).toEqual([
        [1, "write", "/1", "a", ws],
        [2, "write", "/2", "a", ws],
      ]);
      expect(first).toMatchObject({ next: 2, more: true });
      const second = await a.events.list(ws, { after: first.next, limit: 2 });
      expect(second.events.map((e) => e.path)).toEqual(["/3", "/4"]);
      const last = await a.events.list(ws, { after: second.next, limit: 2 });
      expect(last).toMatchObject({ events: [{ seq: 5, path: "/5" }], next: 5, more: false });
      expect(await a.events.list(ws, { after: last.next })).toEqual({ events: [], next: 5, more: false });
      // Everything, by default from the start.
      expect((await a.events.list(ws)).events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    });

    it("filters by subtree, actor, operation and time, the cursor moving past what it looked at", async () => {
      const { a, b, ws } = await pair();
      await a.workspaces.create(ws);
      await write(a, ws, "/src/a.ts");
      await write(b, ws, "/src/lib/b.ts");
      await write(a, ws, "/srcs/not-below.ts");
      await write(a, ws, "/docs/c.md");
      await a.checkpoints.create(ws, { name: "one" });
      const t = Date.now() + 1;
      while (Date.now() < t) await new Promise((r) => setTimeout(r, 1));
      await write(b, ws, "/src/later.ts");

      const paths = (page: { events: EventRecord[] }) => page.events.map((e) => e.path);
      expect(paths(await a.events.list(ws, { path: "/src" }))).toEqual(["/src/a.ts", "/src/lib/b.ts", "/src/later.ts"]);
      expect(paths(await a.events.list(ws, { path: "src/lib/" }))).toEqual(["/src/lib/b.ts"]);
      expect(paths(await a.events.list(ws, { actor: "b" }))).toEqual(["/src/lib/b.ts", "/src/later.ts"]);
      expect((await a.events.list(ws, { ops: ["checkpoint"] })).events.map((e) => e.seq)).toEqual([5]);
      expect(paths(await a.events.list(ws, { since: t, path: "/src" }))).toEqual(["/src/later.ts"]);
      // A page of one match: the cursor stops at it, and the next page goes on from there.
      const first = await a.events.list(ws, { path: "/src", limit: 1 });
      expect(first).toMatchObject({ next: 1, more: true });
      const second = await a.events.list(ws, { path: "/src", limit: 1, after: first.next });
      expect(second).toMatchObject({ events: [{ path: "/src/lib/b.ts" }], next: 2 });
      // Past the last match, the cursor still moves over what was looked at.
      const rest = await a.events.list(ws, { path: "/docs", after: 4 });
      expect(rest).toEqual({ events: [], next: 6, more: false });
      await expect(a.events.list(ws, { since: -5 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });

    it("refuses an unknown workspace and a bad cursor or limit", async () => {
      const { a, ws } = await pair();
      await expect(a.events.list(ws)).rejects.toMatchObject({ code: "NOT_FOUND" });
      await a.workspaces.create(ws);
      await expect(a.events.list(ws, { limit: 0 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      await expect(a.events.list(ws, { after: -1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });

    it("follows from a sequence number: what came after it, then writes made through another engine", async () => {
      const { a, b, ws } = await pair();
      await a.workspaces.create(ws);
      await write(a, ws, "/old");
      await write(a, ws, "/kept");
      const from = (await a.events.list(ws, { limit: 1 })).next;
      const c = collect((seen) => seen.some((e) => e.path === "/from-b"));
      const follower = a.events.follow(ws, from, c.onEvents);
      try {
        // Written through the other engine: its own connection to the store, as another process has.
        await write(b, ws, "/from-b");
        await c.arrived;
      } finally {
        follower.close();
      }
      expect(c.seen.map((e) => [e.seq, e.path, e.actor])).toEqual([
        [2, "/kept", "a"],
        [3, "/from-b", "b"],
      ]);
      // A checkpoint through the other engine is an event too, seen by a follower from where it was.
      const d = collect((seen) => seen.some((e) => e.op === "checkpoint"));
      const again = a.events.follow(ws, 3, d.onEvents);
      try {
        await b.checkpoints.create(ws, { name: "one" });
        await d.arrived;
      } finally {
        again.close();
      }
      expect(d.seen.map((e) => e.seq)).toEqual([4]);
    });
  });
}
