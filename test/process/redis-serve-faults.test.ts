// Faults under a built `afs serve` on Redis: redis-server is SIGKILLed and restarted on the same
// data directory ten times during a write storm. afs must reconnect by itself, keep every write it
// acknowledged (AOF with fsync always), answer the others with a clear error and never hang, and
// leave a store that passes fsck with an event log without gaps.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { openStore } from "../../src/store/open.js";
import { storeEnabled } from "../contract/stores.js";
import { connectHttp } from "../mcp/serve.js";
import type { Session } from "../mcp/session.js";
import { type AfsServe, type Fleet, fleet, pool, sleep } from "./redis-fleet.js";

const RESTARTS = 10;
const LANES = 4;
/** How long the storm runs between restarts before the next kill. */
const RUN_BETWEEN_MS = 400;
/** A call taking longer than this counts as a hang (afs's own reply deadline is 30 s). */
const CALL_BOUND_MS = 15_000;
/** After the last restart, how long afs may take to accept writes again. */
const RECOVERY_MS = 10_000;
const RECOVERED_AFTER = 20;

/**
 * A clear failure: IO_ERROR or TIMEOUT naming the server, as a tool result or, when the token
 * lookup already failed, as the HTTP 503 that refused the request.
 */
const CLEAR = /^(HTTP 503: )?(IO_ERROR|TIMEOUT): .*Redis at 127\.0\.0\.1:\d+/;

type Outcome = { n: number; path: string; ms: number } & ({ ok: true } | { ok: false; error: string });

describe.runIf(storeEnabled("redis"))("afs serve while redis-server is killed and restarted", () => {
  let f: Fleet;
  let server: AfsServe;
  let s: Session;

  beforeAll(async () => {
    f = await fleet();
    f.ok(["ws", "create", "storm"]);
    server = await f.serve();
    s = await connectHttp(server.url, f.issue(["--workspace", "storm"]).secret);
  }, 120_000);
  afterAll(async () => {
    await s?.close().catch(() => {});
    await f?.cleanup();
  });

  const contentOf = (n: number): string => `storm write ${n}\n`;

  /** One bounded file_write: acknowledged, or the error it came back with (HTTP or tool). */
  async function attempt(n: number): Promise<Outcome> {
    const path = `/storm/${n % 16}/f${n}.txt`;
    const start = Date.now();
    const ms = (): number => Date.now() - start;
    try {
      const r = await s.client.callTool({ name: "file_write", arguments: { path, content: contentOf(n) } }, undefined, {
        timeout: CALL_BOUND_MS,
      });
      if (!r.isError) return { n, path, ms: ms(), ok: true };
      const { error } = r.structuredContent as { error: { code: string; message: string } };
      return { n, path, ms: ms(), ok: false, error: `${error.code}: ${error.message}` };
    } catch (e) {
      // Refused before any tool ran (the token lookup reads the store too): the HTTP status and
      // the JSON-RPC error's message; or the SDK's own timeout.
      const text = e instanceof Error ? e.message : String(e);
      let message = text;
      try {
        message = (JSON.parse(/\{.*\}$/s.exec(text)?.[0] ?? "") as { error: { message: string } }).error.message;
      } catch {}
      return { n, path, ms: ms(), ok: false, error: `HTTP ${(e as { code?: unknown }).code}: ${message}` };
    }
  }

  it(`every acknowledged write survives ${RESTARTS} SIGKILLs of redis-server; afs recovers by itself`, async () => {
    const outcomes: Outcome[] = [];
    let n = 0;
    let storming = true;
    // A few sequential writers side by side, so the kills find writes in flight.
    const storm = Promise.all(
      Array.from({ length: LANES }, async () => {
        while (storming) outcomes.push(await attempt(n++));
      }),
    );

    for (let round = 0; round < RESTARTS; round++) {
      await sleep(RUN_BETWEEN_MS);
      await f.redis.kill("SIGKILL");
      await sleep(100 + ((round * 53) % 201));
      await f.redis.restart();
    }
    const restartedAt = outcomes.length;
    // Recovered: a run of acknowledged writes after the last restart, without restarting afs serve.
    const recovered = (): boolean => {
      const tail = outcomes.slice(restartedAt);
      return tail.length >= RECOVERED_AFTER && tail.slice(-RECOVERED_AFTER).every((o) => o.ok);
    };
    const until = Date.now() + RECOVERY_MS;
    while (!recovered() && Date.now() < until) await sleep(50);
    storming = false;
    await storm;

    const acked = outcomes.filter((o) => o.ok);
    const failed = outcomes.filter((o): o is Extract<Outcome, { ok: false }> => !o.ok);
    console.info(
      `storm: ${outcomes.length} writes, ${acked.length} acknowledged, ${failed.length} failed, slowest ${Math.max(
        ...outcomes.map((o) => o.ms),
      )} ms; errors: ${[...new Set(failed.map((o) => o.error.slice(0, 60)))].join(" | ")}`,
    );
    expect(server.running(), "afs serve died").toBe(true);
    // It said each time that it lost Redis and got it back, and nothing else (no stack traces).
    const log = server.stderr().trim().split("\n").slice(1);
    expect(log.filter((l) => !/^afs: (lost the connection to|reconnected to) Redis at /.test(l))).toEqual([]);
    expect(log.at(-1)).toMatch(/^afs: reconnected to Redis/);
    expect(
      recovered(),
      `no run of ${RECOVERED_AFTER} acknowledged writes within ${RECOVERY_MS} ms of the last restart`,
    ).toBe(true);
    // The kills hit the storm (else this proves nothing), and every failure said why, at once.
    expect(failed.length).toBeGreaterThan(0);
    const unclear = failed.filter((o) => !CLEAR.test(o.error));
    expect(unclear.map((o) => `#${o.n}: ${o.error}`).slice(0, 5)).toEqual([]);

    // Every acknowledged write is there, read back through the same afs serve.
    const lost = await pool(acked, 16, async (o) => {
      const r = await s.call("file_read", { path: o.path });
      return !r.isError && (r.structuredContent as { content: string }).content === contentOf(o.n) ? null : o.path;
    });
    expect(lost.filter(Boolean)).toEqual([]);

    const fsck = f.afs(["fsck", "--store", f.store]);
    expect(fsck.status, fsck.stderr).toBe(0);
    expect(fsck.stdout).toContain("ok");

    // The event log runs 1..revision without a gap, and records every acknowledged write.
    const store = await openStore(f.store);
    try {
      const ws = await store.getWorkspace("storm");
      const events = await store.listEvents("storm", 0, 1_000_000);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: ws?.revision ?? -1 }, (_, i) => i + 1));
      // A write whose reply was lost is never applied twice: one event per path at most.
      const paths = events.map((e) => e.path).filter((p) => p.endsWith(".txt"));
      expect(paths.length - new Set(paths).size, "paths written twice").toBe(0);
      const written = new Map(events.map((e) => [e.path, e.newHash]));
      const unlogged = acked.filter((o) => written.get(o.path) !== sha256(contentOf(o.n)));
      expect(unlogged.map((o) => o.path)).toEqual([]);
    } finally {
      await store.close();
    }
  }, 120_000);

  it("a call while Redis is down fails with IO_ERROR naming the server, and afs serves again once it is back", async () => {
    await f.redis.kill("SIGKILL");
    let down: Outcome[];
    try {
      down = [await attempt(1_000_000), await attempt(1_000_001)];
    } finally {
      await f.redis.restart();
    }
    expect(down.map((o) => (o.ok ? "acknowledged" : o.error))).toEqual([
      expect.stringMatching(CLEAR),
      expect.stringMatching(CLEAR),
    ]);
    let after = await attempt(1_000_002);
    const until = Date.now() + RECOVERY_MS;
    while (!after.ok && Date.now() < until) {
      await sleep(100);
      after = await attempt(1_000_002);
    }
    expect(after).toMatchObject({ ok: true });
    expect(server.running()).toBe(true);
  }, 60_000);
});
