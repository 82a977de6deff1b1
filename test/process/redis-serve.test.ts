// Two built `afs serve` processes on different ports over one redis-server, driven by the official
// MCP SDK client over real HTTP: what one writes the other reads, create_exclusive races have one
// winner, compare-and-swap editors lose no update, a revoked token is refused everywhere at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { openStore } from "../../src/store/open.js";
import { RedisStore } from "../../src/store/redis/store.js";
import type { EventRecord, Store } from "../../src/store/store.js";
import { storeEnabled } from "../contract/stores.js";
import { connectHttp, post, toolCall } from "../mcp/serve.js";
import type { Session } from "../mcp/session.js";
import { type AfsServe, type Fleet, fleet, pool, sleep } from "./redis-fleet.js";

/** Typically 15–20 s each on 2 cores; the bound leaves room for a machine running other suites. */
const TEST_TIMEOUT_MS = 120_000;
const RACE_PATHS = 1000;
const RACE_IN_FLIGHT = 16;
const EDITORS = 8;
const INCREMENTS = 25;
/** The issue's bound for a change made through one process to reach a follower in another. */
const EVENT_PATH_MS = 100;

// followEvents on Redis comes with another branch; until it is merged the event-path test skips.
const redisFollows = typeof (RedisStore.prototype as Partial<Store>).followEvents === "function";

describe.runIf(storeEnabled("redis"))("two afs serve processes over one Redis", () => {
  let f: Fleet;
  let a: AfsServe;
  let b: AfsServe;
  const sessions: Session[] = [];
  const connect = async (server: AfsServe, secret: string): Promise<Session> => {
    const s = await connectHttp(server.url, secret);
    sessions.push(s);
    return s;
  };
  /** A fresh workspace and a workspace-rw token for it, usable on both servers. */
  const workspace = (name: string): string => {
    f.ok(["ws", "create", name]);
    return f.issue(["--workspace", name, "--name", `${name}-agent`]).secret;
  };

  beforeAll(async () => {
    f = await fleet();
    [a, b] = await Promise.all([f.serve(), f.serve()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(sessions.map((s) => s.close()));
    await f?.cleanup();
  });

  it("a write through one is read and listed through the other, whatever the other read before", async () => {
    const token = workspace("shared");
    expect(a.url).not.toBe(b.url);
    const [sa, sb] = [await connect(a, token), await connect(b, token)];
    const listing = async (s: Session) =>
      (await s.ok<{ items: { path: string }[] }>("file_list", { path: "/docs" })).items.map((e) => e.path);

    await sa.ok("file_write", { path: "/docs/hello.md", content: "from a\n" });
    expect(await sb.ok("file_read", { path: "/docs/hello.md" })).toMatchObject({
      content: "from a\n",
      sha256: sha256("from a\n"),
    });
    expect(await listing(sb)).toEqual(["/docs/hello.md"]);

    // b has read and listed; a changes both under it.
    await sa.ok("file_write", { path: "/docs/hello.md", content: "again from a\n" });
    await sa.ok("file_write", { path: "/docs/new.md", content: "new\n" });
    expect((await sb.ok("file_read", { path: "/docs/hello.md" })).content).toBe("again from a\n");
    expect(await listing(sb)).toEqual(["/docs/hello.md", "/docs/new.md"]);

    await sb.ok("file_write", { path: "/docs/hello.md", content: "from b\n" });
    expect((await sa.ok("file_read", { path: "/docs/hello.md" })).content).toBe("from b\n");
    await sa.ok("file_delete", { path: "/docs/hello.md" });
    expect((await sb.fail("file_read", { path: "/docs/hello.md" })).code).toBe("NOT_FOUND");
    expect(await listing(sb)).toEqual(["/docs/new.md"]);
  });

  it(
    `${RACE_PATHS} create_exclusive races (each path created through both at once): exactly one winner each`,
    async () => {
      const token = workspace("race");
      const [sa, sb] = [await connect(a, token), await connect(b, token)];
      const sides = [
        { name: "a", s: sa },
        { name: "b", s: sb },
      ] as const;
      const paths = Array.from({ length: RACE_PATHS }, (_, i) => `/race/${i % 10}/p${i}.txt`);
      const contentOf = (side: string, path: string): string => `${path} created through ${side}\n`;

      const outcomes = await pool(paths, RACE_IN_FLIGHT, async (path, i) => {
        // Alternate which request leaves first, so neither server always has the head start.
        const order = i % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
        const results = await Promise.all(
          order.map(async ({ name, s }) => {
            const r = await s.call("file_create_exclusive", { path, content: contentOf(name, path) });
            const code = r.isError ? (r.structuredContent as { error: { code: string } }).error.code : "won";
            return { name, code };
          }),
        );
        return { path, results };
      });

      const wrong = outcomes.filter(
        (o) =>
          o.results.filter((r) => r.code === "won").length !== 1 ||
          o.results.filter((r) => r.code === "ALREADY_EXISTS").length !== 1,
      );
      expect(wrong.slice(0, 5), `${wrong.length} paths without exactly one winner`).toEqual([]);
      const winners = new Map(outcomes.map((o) => [o.path, o.results.find((r) => r.code === "won")?.name ?? "?"]));
      const winsOfA = [...winners.values()].filter((w) => w === "a").length;
      console.info(`create_exclusive races: a won ${winsOfA}, b won ${RACE_PATHS - winsOfA}`);

      // The loser sees the winner's content, through the server that refused it.
      const mismatched = await pool(outcomes, RACE_IN_FLIGHT, async ({ path, results }) => {
        const loser = results.find((r) => r.code !== "won")?.name === "a" ? sa : sb;
        const read = await loser.ok<{ content: string }>("file_read", { path });
        return read.content === contentOf(winners.get(path) ?? "?", path) ? null : path;
      });
      expect(mismatched.filter(Boolean)).toEqual([]);

      // The event log records one creation per path and never a write over it.
      await withStore(f.store, async (store) => {
        const events = await store.listEvents("race", 0, 100_000);
        const writes = events.filter((e) => e.path.endsWith(".txt"));
        expect(writes).toHaveLength(RACE_PATHS);
        expect(new Set(writes.map((e) => e.path)).size).toBe(RACE_PATHS);
        expect(writes.filter((e) => e.oldHash !== null)).toEqual([]);
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    `${EDITORS} compare-and-swap editors across both lose no update`,
    async () => {
      const token = workspace("cas");
      const seed = await connect(a, token);
      await seed.ok("file_write", { path: "/counter.txt", content: "0\n" });
      const editors = await Promise.all(Array.from({ length: EDITORS }, (_, n) => connect(n % 2 === 0 ? a : b, token)));

      const reports = await Promise.all(
        editors.map(async (s, n) => {
          let done = 0;
          let conflicts = 0;
          const start = Date.now();
          while (done < INCREMENTS) {
            if (conflicts > 50 * INCREMENTS) throw new Error(`editor ${n}: ${conflicts} conflicts, giving up`);
            const read = await s.ok<{ content: string; sha256: string }>("file_read", { path: "/counter.txt" });
            const next = `${Number.parseInt(read.content, 10) + 1}\n`;
            const r = await s.call("file_write", { path: "/counter.txt", content: next, expected_sha256: read.sha256 });
            if (!r.isError) {
              done++;
              continue;
            }
            const { error } = r.structuredContent as { error: { code: string; message: string } };
            if (error.code !== "CONFLICT") throw new Error(`editor ${n}: ${error.code}: ${error.message}`);
            conflicts++;
          }
          return { done, conflicts, start, end: Date.now() };
        }),
      );

      // The editors really overlapped, or this would prove nothing.
      expect(Math.max(...reports.map((r) => r.start))).toBeLessThan(Math.min(...reports.map((r) => r.end)));
      const done = reports.reduce((sum, r) => sum + r.done, 0);
      const conflicts = reports.reduce((sum, r) => sum + r.conflicts, 0);
      console.info(`CAS editors: ${done} increments, ${conflicts} CONFLICT retries`);
      expect(done).toBe(EDITORS * INCREMENTS);
      for (const s of [editors[0], editors[1]] as Session[]) {
        expect((await s.ok("file_read", { path: "/counter.txt" })).content).toBe(`${done}\n`);
      }
      await withStore(f.store, async (store) => {
        const writes = (await store.listEvents("cas", 0, 100_000)).filter((e) => e.path === "/counter.txt");
        expect(writes).toHaveLength(done + 1);
      });
    },
    TEST_TIMEOUT_MS,
  );

  it("a token revoked through one server is refused by the other on its next request", async () => {
    workspace("guarded");
    const admin = await connect(a, f.issue(["--control-plane", "--profile", "admin-rw"]).secret);
    const byTool = f.issue(["--workspace", "guarded", "--name", "revoked-by-tool"]);
    const byCli = f.issue(["--workspace", "guarded", "--name", "revoked-by-cli"]);
    const list = toolCall("file_list", { path: "/" });
    const status = async (server: AfsServe, secret: string) =>
      (await post(server.url, list, { Authorization: `Bearer ${secret}` })).status;

    // Both servers have looked the tokens up (and could have cached them) before the revocation.
    const live = await connect(b, byTool.secret);
    await live.ok("file_list", { path: "/" });
    for (const t of [byTool, byCli]) expect([await status(a, t.secret), await status(b, t.secret)]).toEqual([200, 200]);

    expect(await admin.ok("mcp_token_revoke", { token_id: byTool.id })).toEqual({ token_id: byTool.id, revoked: true });
    const refused = await post(b.url, list, { Authorization: `Bearer ${byTool.secret}` });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain("revoked");
    await expect(live.call("file_list", { path: "/" })).rejects.toMatchObject({ code: 401 });
    expect(await status(a, byTool.secret)).toBe(401);

    f.ok(["token", "revoke", byCli.id]);
    expect([await status(b, byCli.secret), await status(a, byCli.secret)]).toEqual([401, 401]);
  });

  it.runIf(redisFollows)(
    `a follower in another process sees a write made through afs serve within ${EVENT_PATH_MS} ms`,
    async () => {
      const token = workspace("followed");
      const s = await connect(a, token);
      await withStore(f.store, async (store) => {
        const from = (await store.getWorkspace("followed"))?.revision ?? 0;
        const seen: { event: EventRecord; at: number }[] = [];
        const follower = store.followEvents("followed", from, (events) => {
          const at = Date.now();
          for (const event of events) seen.push({ event, at });
        });
        try {
          for (let i = 0; i < 5; i++) {
            const path = `/watched/${i}.txt`;
            await s.ok("file_write", { path, content: `change ${i}\n` });
            const until = Date.now() + 5_000;
            while (!seen.some((x) => x.event.path === path) && Date.now() < until) await sleep(5);
            const hit = seen.find((x) => x.event.path === path);
            expect(hit, `no event for ${path} within 5 s`).toBeDefined();
            // event.time is when afs serve committed the change (same machine, same clock).
            const lag = (hit?.at ?? 0) - (hit?.event.time ?? 0);
            expect(lag, `${path} reached the follower after ${lag} ms`).toBeLessThanOrEqual(EVENT_PATH_MS);
          }
        } finally {
          follower.close();
        }
        expect(seen.map((x) => x.event.seq)).toEqual(seen.map((_, i) => from + i + 1));
      });
    },
  );
});

async function withStore<T>(url: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(url);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
