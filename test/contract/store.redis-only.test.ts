// What only the Redis store promises: one clear IO_ERROR for a server it cannot reach, passwords
// never shown, a refused change leaving every key as it was, one winner among racing commits, the
// durability warning, and recovery after the server comes back.
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { sha256 } from "../../src/core/hash.js";
import { driverOf } from "../../src/store/checked-store.js";
import { openStore } from "../../src/store/open.js";
import { parseRedisUrl } from "../../src/store/redis/connect.js";
import { RedisStore } from "../../src/store/redis/store.js";
import type { CheckpointRecord, Store, WorkspaceRecord } from "../../src/store/store.js";
import { freePort, type RedisServer, startRedis } from "../helpers/redis-server.js";
import { openRedis, storeEnabled } from "./stores.js";

const EMPTY_ROOT = sha256("[]");
const fileEntry = (s: string) => ({ kind: "file" as const, hash: sha256(s), size: s.length, mode: 0o644, mtime: 5 });
const ev = (path: string) => ({
  op: "write",
  path,
  oldHash: null,
  newHash: sha256(path),
  actor: "tester",
  surface: "test",
});

function checkpoint(workspace: string, name: string): CheckpointRecord {
  return {
    id: randomUUID(),
    workspace,
    name,
    root: EMPTY_ROOT,
    parent: null,
    createdAt: 1,
    actor: "tester",
    kind: "manual",
    description: "",
  };
}

async function seed(store: Store, name = "ws"): Promise<{ ws: WorkspaceRecord; initial: CheckpointRecord }> {
  await store.putTrees([{ hash: EMPTY_ROOT, data: Buffer.from("[]") }]);
  const initial = { ...checkpoint(name, "initial"), kind: "initial" as const };
  const ws: WorkspaceRecord = { name, description: "", head: initial.id, revision: 0, createdAt: 1, updatedAt: 1 };
  await store.createWorkspace(ws, initial);
  return { ws, initial };
}

async function failure(p: Promise<unknown>): Promise<AfsError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AfsError);
  return e as AfsError;
}

describe.runIf(storeEnabled("redis"))("RedisStore", () => {
  let server: RedisServer;
  let n = 0;
  const stores: Store[] = [];
  const prefix = () => `only${process.pid}x${++n}`;
  const open = async (p = prefix()) => {
    const s = await openRedis(server.url, { prefix: p });
    stores.push(s);
    return s;
  };

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await server?.stop();
  });

  /** Every key under a prefix with its DUMP, to compare the whole keyspace before and after. */
  async function snapshot(p: string): Promise<Map<string, string>> {
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      const out = new Map<string, string>();
      const keys = (await raw.sendCommand(["KEYS", `${p}:*`])) as string[];
      for (const k of keys.sort()) {
        const dump = await raw.withTypeMapping({ 36: Buffer }).sendCommand(["DUMP", k]);
        out.set(k, (dump as unknown as Buffer).toString("base64"));
      }
      return out;
    } finally {
      await raw.close();
    }
  }

  it("reports an unreachable server as one IO_ERROR naming host and port, within a few seconds", async () => {
    const port = await freePort();
    const started = Date.now();
    const e = await failure(openStore(`redis://127.0.0.1:${port}/0`));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(e.code).toBe("IO_ERROR");
    expect(e.message).toContain(`127.0.0.1:${port}`);
    expect(e.message).toMatch(/redis-server is running/);
  });

  it("opens through openStore and refuses a URL whose database is not a number", async () => {
    const store = await openStore(server.url);
    try {
      expect(driverOf(store)).toBeInstanceOf(RedisStore);
      expect(store.url).toBe(`redis://127.0.0.1:${server.port}/0`);
    } finally {
      await store.close();
    }
    expect((await failure(openStore(`redis://127.0.0.1:${server.port}/abc`))).code).toBe("INVALID_ARGUMENT");
    expect(await failure(store.getWorkspace("ws"))).toMatchObject({ code: "IO_ERROR" });
  });

  it("parses URLs: defaults, user, database, TLS, and the password from the URL or AFS_REDIS_PASSWORD", () => {
    expect(parseRedisUrl("redis://cache", {})).toMatchObject({
      host: "cache",
      port: 6379,
      db: 0,
      tls: false,
      shown: "redis://cache:6379/0",
    });
    expect(parseRedisUrl("redis://[::1]:7001/2", {})).toMatchObject({ host: "::1", shown: "redis://[::1]:7001/2" });
    expect(parseRedisUrl("redis://u@cache", {}).shown).toBe("redis://u@cache:6379/0");
    expect(parseRedisUrl("redis://cache/1?prefix=team-a", {})).toMatchObject({
      prefix: "team-a",
      shown: "redis://cache:6379/1?prefix=team-a",
    });
    expect(() => parseRedisUrl("redis://cache/1?prefix={x}", {})).toThrow(/prefix/);
    expect(() => parseRedisUrl("redis://cache/1?timeout=5", {})).toThrow(/unknown parameters/);
    expect(parseRedisUrl("rediss://u:p%40ss@cache:6380/3", {})).toMatchObject({
      tls: true,
      port: 6380,
      db: 3,
      username: "u",
      password: "p@ss",
      shown: "rediss://u:***@cache:6380/3",
    });
    const fromEnv = parseRedisUrl("redis://cache:7000/1", { AFS_REDIS_PASSWORD: "envpw" });
    expect(fromEnv).toMatchObject({ password: "envpw", shown: "redis://cache:7000/1" });
    expect(parseRedisUrl("redis://:urlpw@cache/", { AFS_REDIS_PASSWORD: "envpw" }).password).toBe("urlpw");
  });

  it("never shows a password: masked in store.url and absent from errors", async () => {
    const secured = await startRedis(["--requirepass", "s3cret-pw"]);
    try {
      const store = await openRedis(`redis://:s3cret-pw@127.0.0.1:${secured.port}/0`);
      try {
        expect(store.url).toBe(`redis://:***@127.0.0.1:${secured.port}/0`);
        expect(await store.getWorkspace("x")).toBeNull();
      } finally {
        await store.close();
      }
      const viaEnv = await openRedis(`redis://127.0.0.1:${secured.port}/0`, {
        env: { AFS_REDIS_PASSWORD: "s3cret-pw" },
      });
      expect(viaEnv.url).not.toContain("s3cret");
      await viaEnv.close();
      const wrong = await failure(openRedis(`redis://:not-it@127.0.0.1:${secured.port}/0`));
      expect(wrong.code).toBe("PERMISSION_DENIED");
      expect(wrong.message).not.toContain("not-it");
      const none = await failure(openRedis(`redis://127.0.0.1:${secured.port}/0`, { env: {} }));
      expect(none.code).toBe("PERMISSION_DENIED");
      expect(none.message).toContain("AFS_REDIS_PASSWORD");
    } finally {
      await secured.stop();
    }
  });

  it("leaves every key unchanged when a change is refused", async () => {
    const p = prefix();
    const store = await open(p);
    const { ws, initial } = await seed(store);
    await seed(store, "other");
    await store.putBlobs([{ hash: sha256("a"), data: Buffer.from("a") }]);
    await store.commit("ws", { expectRevision: 0, set: [{ path: "/a", entry: fileEntry("a") }], events: [ev("/a")] });
    const first = checkpoint("ws", "first");
    await store.moveHead("ws", {
      expectRevision: 1,
      checkpoint: first,
      head: first.id,
      clearOverlay: false,
      event: ev("/"),
    });
    await store.commit("ws", {
      expectRevision: 2,
      set: [{ path: "/b/c", entry: fileEntry("c") }],
      events: [ev("/b/c")],
    });
    await store.setTemplate("other", "tpl");
    const before = await snapshot(p);
    expect(before.size).toBeGreaterThan(5);
    /** A dump of a new workspace (default "copy") whose second checkpoint has id `id`. */
    const dump = (id: string, name = "copy") => {
      const head = checkpoint(name, "initial");
      const second = { ...checkpoint(name, "second"), id };
      return {
        workspace: { ...ws, name, head: head.id, revision: 1 },
        checkpoints: [head, second],
        overlay: [{ path: "/a", entry: fileEntry("a") }],
        events: [{ ...ev("/a"), workspace: name, seq: 1, time: 7 }],
      };
    };

    const refusals: [string, () => Promise<unknown>][] = [
      [
        "CONFLICT",
        () =>
          store.commit("ws", {
            expectRevision: 1,
            clearUnder: ["/"],
            set: [{ path: "/z", entry: fileEntry("z") }],
            events: [ev("/z"), ev("/y")],
          }),
      ],
      ["NOT_FOUND", () => store.commit("nope", { expectRevision: 0, set: [], events: [ev("/")] })],
      [
        "CONFLICT",
        () => {
          const late = checkpoint("ws", "late");
          return store.moveHead("ws", {
            expectRevision: 0,
            checkpoint: late,
            head: late.id,
            clearOverlay: true,
            event: ev("/"),
          });
        },
      ],
      [
        "ALREADY_EXISTS",
        () => {
          const clash = checkpoint("ws", "first");
          return store.moveHead("ws", {
            expectRevision: 3,
            checkpoint: clash,
            head: clash.id,
            clearOverlay: true,
            event: ev("/"),
          });
        },
      ],
      [
        "ALREADY_EXISTS",
        () => {
          const stolen = { ...checkpoint("ws", "stolen"), id: initial.id };
          return store.moveHead("other", {
            expectRevision: 0,
            checkpoint: { ...stolen, workspace: "other" },
            head: initial.id,
            clearOverlay: true,
            event: ev("/"),
          });
        },
      ],
      [
        "NOT_FOUND",
        () => {
          const orphan = checkpoint("ws", "orphan");
          return store.moveHead("ws", {
            expectRevision: 3,
            checkpoint: orphan,
            head: "no-such",
            clearOverlay: true,
            event: ev("/"),
          });
        },
      ],
      ["CONFLICT", () => store.deleteCheckpoint("ws", first.id)],
      [
        "ALREADY_EXISTS",
        () => {
          const again = { ...checkpoint("ws", "initial"), kind: "initial" as const };
          return store.createWorkspace({ ...ws, head: again.id }, again);
        },
      ],
      [
        "ALREADY_EXISTS",
        () => {
          const reused = { ...initial, workspace: "fresh" };
          return store.createWorkspace({ ...ws, name: "fresh" }, reused);
        },
      ],
      ["ALREADY_EXISTS", () => store.importWorkspace(dump(initial.id))],
      [
        "ALREADY_EXISTS",
        () => {
          const twice = dump(randomUUID());
          const again = { ...checkpoint("copy", "third"), id: twice.workspace.head };
          return store.importWorkspace({ ...twice, checkpoints: [...twice.checkpoints, again] });
        },
      ],
      ["ALREADY_EXISTS", () => store.importWorkspace(dump(randomUUID(), "ws"))],
      ["INVALID_ARGUMENT", () => store.importWorkspace({ ...dump(randomUUID()), checkpoints: [] })],
      ["ALREADY_EXISTS", () => store.setTemplate("ws", "tpl")],
      ["NOT_FOUND", () => store.setTemplate("nope", "new")],
    ];
    for (const [code, attempt] of refusals) {
      expect((await failure(attempt())).code).toBe(code);
      expect(await snapshot(p)).toEqual(before);
    }
  });

  it("refuses a change whole when Redis is out of memory, and still deletes and revokes then", async () => {
    const p = prefix();
    const store = await open(p);
    await seed(store);
    await seed(store, "doomed");
    await store.commit("ws", {
      expectRevision: 0,
      set: [{ path: "/a/x", entry: fileEntry("x") }],
      events: [ev("/a/x")],
    });
    await store.putToken({
      id: "t1",
      name: "t1",
      secretHash: "a".repeat(64),
      workspace: null,
      profile: "admin-ro",
      createdAt: 1,
      expiresAt: null,
      revokedAt: null,
      actor: "tester",
    });
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      const before = await snapshot(p);
      await raw.sendCommand(["CONFIG", "SET", "maxmemory", "1"]);
      // The clear would free memory and the set would need it: refused before either happens.
      const full = await failure(
        store.commit("ws", {
          expectRevision: 1,
          clearUnder: ["/a"],
          set: [{ path: "/b", entry: fileEntry("b") }],
          events: [ev("/b")],
        }),
      );
      expect(full.code).toBe("QUOTA_EXCEEDED");
      expect(await snapshot(p)).toEqual(before);
      expect(await store.revokeToken("t1", 5)).toBe(true);
      expect(await store.deleteWorkspace("doomed")).toBe(true);
    } finally {
      await raw.sendCommand(["CONFIG", "SET", "maxmemory", "0"]);
      await raw.close();
    }
    expect((await store.getToken("t1"))?.revokedAt).toBe(5);
    expect(await store.commit("ws", { expectRevision: 1, set: [], events: [ev("/c")] })).toBe(2);
  });

  it("reads an event written before surfaces were recorded as from an unknown surface", async () => {
    const p = prefix();
    const store = await open(p);
    await seed(store);
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      // An event as the layout before surfaces wrote it, and the revision that goes with it.
      const old = ["op", "write", "path", "/a", "old", "", "new", "", "actor", "tester", "time", "5"];
      await raw.sendCommand(["XADD", `${p}:{ws:ws}:ev`, "1-0", ...old]);
      await raw.sendCommand(["HSET", `${p}:{ws:ws}:meta`, "revision", "1"]);
    } finally {
      await raw.close();
    }
    expect(await store.listEvents("ws", 0, 10)).toMatchObject([{ seq: 1, actor: "tester", surface: "unknown" }]);
    await store.commit("ws", { expectRevision: 1, set: [], events: [ev("/b")] });
    expect((await store.listEvents("ws", 1, 10)).map((e) => e.surface)).toEqual(["test"]);
  });

  it("builds the per-path index of a workspace made before it, on its first history read", async () => {
    const p = prefix();
    const store = await open(p);
    await seed(store);
    const paths = Array.from({ length: 2500 }, (_, i) => `/f${i % 3}`);
    await store.commit("ws", { expectRevision: 0, set: [], events: paths.map(ev) });
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      // What the layout before the index left: no index, no mark.
      await raw.sendCommand(["DEL", `${p}:{ws:ws}:evp`]);
      await raw.sendCommand(["HDEL", `${p}:{ws:ws}:meta`, "evp"]);
      const events = await store.listPathEvents("ws", "/f1", null, 3);
      expect(events.map((e) => e.seq)).toEqual([2498, 2495, 2492]);
      expect(await raw.sendCommand(["HGET", `${p}:{ws:ws}:meta`, "evp"])).toBe("1");
      expect(await raw.sendCommand(["ZCARD", `${p}:{ws:ws}:evp`])).toBe(2500);
    } finally {
      await raw.close();
    }
  });

  it("skips a template mark whose workspace is gone, lets its slug go, and drops it when the name returns", async () => {
    const p = prefix();
    const store = await open(p);
    await seed(store, "live");
    // What a crash between deleteWorkspace's script and its removal of the mark leaves behind.
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      await raw.sendCommand(["HSET", `${p}:{tpl}`, "python", "gone"]);
      await raw.sendCommand(["HSET", `${p}:{tpl}:ws`, "gone", "python"]);
      expect(await store.listTemplates()).toEqual([]);
      await store.setTemplate("live", "python");
      expect(await store.listTemplates()).toEqual([{ slug: "python", workspace: "live" }]);
      expect(await raw.sendCommand(["HGET", `${p}:{tpl}:ws`, "gone"])).toBeNull();

      await raw.sendCommand(["HSET", `${p}:{tpl}`, "go", "gone"]);
      await raw.sendCommand(["HSET", `${p}:{tpl}:ws`, "gone", "go"]);
      await seed(store, "gone");
      expect(await store.listTemplates()).toEqual([{ slug: "python", workspace: "live" }]);
    } finally {
      await raw.close();
    }
  });

  it("lets exactly one of 200 concurrent commits from one revision land, across two connections", async () => {
    const p = prefix();
    const a = await open(p);
    const b = await open(p);
    await seed(a);
    const attempts = Array.from({ length: 200 }, (_, i) =>
      (i % 2 ? a : b).commit("ws", {
        expectRevision: 0,
        set: [{ path: `/f${i}`, entry: fileEntry(String(i)) }],
        events: [ev(`/f${i}`), ev("/second")],
      }),
    );
    const results = await Promise.allSettled(attempts);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect((won[0] as PromiseFulfilledResult<number>).value).toBe(2);
    for (const r of results) if (r.status === "rejected") expect((r.reason as AfsError).code).toBe("CONFLICT");
    expect(await b.overlayCount("ws")).toBe(1);
    expect((await a.getWorkspace("ws"))?.revision).toBe(2);
    expect((await b.listEvents("ws", 0, 1000)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("keeps a workspace whose name has braces in one hash tag", async () => {
    const store = await open();
    for (const name of ["a{b}c", "}{", "{x}", "100%"]) {
      await seed(store, name);
      await store.commit(name, { expectRevision: 0, set: [{ path: "/f", entry: fileEntry("f") }], events: [ev("/f")] });
      expect(await store.overlayUnder(name, "/")).toEqual([{ path: "/f", entry: fileEntry("f") }]);
    }
    expect((await store.listWorkspaces()).map((w) => w.name)).toEqual(["100%", "a{b}c", "{x}", "}{"]);
  });

  it("warns once when the server may lose or evict acknowledged writes", async () => {
    const lax = await startRedis(["--appendonly", "no", "--maxmemory-policy", "allkeys-lru"]);
    try {
      const lines: string[] = [];
      const warn = (line: string) => lines.push(line);
      await (await openRedis(lax.url, { warn })).close();
      await (await openRedis(lax.url, { warn })).close();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/appendonly yes/);
      expect(lines[0]).toMatch(/noeviction/);
      expect(lines[0]).toMatch(/everysec/);
      const strict: string[] = [];
      await (await openRedis(server.url, { warn: (l) => strict.push(l) })).close();
      expect(strict).toEqual([]);
    } finally {
      await lax.stop();
    }
  });

  it("fails with TIMEOUT when the server stops answering, and carries on when it answers again", async () => {
    const own = await startRedis();
    const store = await openRedis(own.url, { commandTimeoutMs: 300 });
    try {
      await seed(store);
      own.signal("SIGSTOP");
      const started = Date.now();
      const frozen = await failure(store.commit("ws", { expectRevision: 0, set: [], events: [ev("/a")] }));
      expect(frozen.code).toBe("TIMEOUT");
      expect(frozen.message).toContain(`127.0.0.1:${own.port}`);
      expect(Date.now() - started).toBeLessThan(3_000);
      const opening = Date.now();
      const unanswered = await failure(openRedis(own.url));
      expect(unanswered).toMatchObject({ code: "IO_ERROR", message: expect.stringContaining(`127.0.0.1:${own.port}`) });
      expect(Date.now() - opening).toBeLessThan(10_000);
      own.signal("SIGCONT");
      // The timed-out commit may have applied once the server woke up; it never applies twice.
      const revision = (await store.getWorkspace("ws"))?.revision ?? -1;
      expect([0, 1]).toContain(revision);
      expect(await store.commit("ws", { expectRevision: revision, set: [], events: [ev("/b")] })).toBe(revision + 1);
    } finally {
      own.signal("SIGCONT");
      await store.close();
      await own.stop();
    }
  });

  it("fails with IO_ERROR while the server is down and recovers by itself when it returns", async () => {
    const own = await startRedis();
    const store = await openRedis(own.url);
    try {
      await seed(store);
      await store.commit("ws", { expectRevision: 0, set: [{ path: "/a", entry: fileEntry("a") }], events: [ev("/a")] });
      await own.kill("SIGKILL");
      const down = await failure(
        store.commit("ws", { expectRevision: 1, set: [{ path: "/b", entry: fileEntry("b") }], events: [ev("/b")] }),
      );
      expect(down.code).toBe("IO_ERROR");
      expect(down.message).toContain(`127.0.0.1:${own.port}`);
      expect((await failure(store.getWorkspace("ws"))).code).toBe("IO_ERROR");
      await own.restart();
      let revision: number | undefined;
      for (let i = 0; i < 100 && revision === undefined; i++) {
        revision = await store.getWorkspace("ws").then(
          (w) => w?.revision,
          () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 50)),
        );
      }
      // AOF with fsync always: the acknowledged commit survived the kill; the refused one never applied.
      expect(revision).toBe(1);
      expect(await store.commit("ws", { expectRevision: 1, set: [], events: [ev("/c")] })).toBe(2);
      expect((await store.listEvents("ws", 0, 10)).map((e) => e.path)).toEqual(["/a", "/c"]);
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it("keeps every acknowledged commit, with no gap in the event log, across SIGKILLs during a write storm", async () => {
    const own = await startRedis();
    const store = await openRedis(own.url, { commandTimeoutMs: 2_000 });
    const acknowledged = new Set<string>();
    const uncertain = new Set<string>();
    try {
      await seed(store);
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const path = `/w${w}/${i}`;
          for (;;) {
            const current = await store.getWorkspace("ws").catch(() => null);
            if (stop) return;
            if (!current) {
              await new Promise((r) => setTimeout(r, 20));
              continue;
            }
            try {
              await store.commit("ws", {
                expectRevision: current.revision,
                set: [{ path, entry: fileEntry(path) }],
                events: [ev(path)],
              });
              acknowledged.add(path);
              break;
            } catch (e) {
              const code = (e as AfsError).code;
              if (code === "CONFLICT") continue;
              // The connection died with the commit in flight: it may or may not have landed.
              uncertain.add(path);
              break;
            }
          }
        }
      };
      const writers = Array.from({ length: 4 }, (_, w) => writer(w));
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 300));
        await own.kill("SIGKILL");
        await new Promise((r) => setTimeout(r, 100));
        await own.restart();
      }
      await new Promise((r) => setTimeout(r, 300));
      stop = true;
      await Promise.all(writers);

      const ws = await store.getWorkspace("ws");
      const events = await store.listEvents("ws", 0, 1_000_000);
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: ws?.revision ?? 0 }, (_, i) => i + 1));
      const logged = events.map((e) => e.path);
      expect(new Set(logged).size).toBe(logged.length); // nothing applied twice
      for (const path of acknowledged) expect(logged).toContain(path);
      for (const path of logged) expect(acknowledged.has(path) || uncertain.has(path)).toBe(true);
      const live = await store.overlayUnder("ws", "/");
      expect(
        live
          .filter((r) => r.entry?.kind === "file")
          .map((r) => r.path)
          .sort(),
      ).toEqual([...logged].sort());
      expect(acknowledged.size).toBeGreaterThan(10);
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it("names the blob of a missing or corrupt chunk, and an event log past its revision (refusing commits on it)", async () => {
    const p = prefix();
    const store = await open(p);
    const c = store.chunkBytes;
    const data = Buffer.alloc(3 * c);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    const { hash } = await store.putBlobStream([data]);
    const chunkHash = (i: number): string => sha256(data.subarray(i * c, (i + 1) * c));
    const raw = createClient({ url: server.url, RESP: 2 });
    await raw.connect();
    try {
      await raw.sendCommand(["HSET", `${p}:{c:${chunkHash(1)}}`, "d", Buffer.alloc(c)]);
      await raw.sendCommand(["DEL", `${p}:{c:${chunkHash(2)}}`]);
    } finally {
      await raw.close();
    }
    await seed(store);
    const raw2 = createClient({ url: server.url, RESP: 2 });
    await raw2.connect();
    try {
      await raw2.sendCommand(["XADD", `${p}:{ws:ws}:ev`, "7-0", "op", "write"]);
    } finally {
      await raw2.close();
    }
    const problems = await store.checkIntegrity();
    expect(problems).toContainEqual("workspace ws: its event log ends at 7, past its revision 0");
    expect((await failure(store.commit("ws", { expectRevision: 0, set: [], events: [ev("/")] }))).code).toBe(
      "IO_ERROR",
    );
    expect(problems).toContainEqual(`blob ${hash}: chunk ${chunkHash(2)} at byte ${2 * c} is missing`);
    expect(problems).toContainEqual(
      `chunk ${chunkHash(1)} (in blob ${hash} at byte ${c}) does not match its content hash`,
    );
    const err = await failure(
      (async () => {
        for await (const _ of store.blobStream(hash)) {
        }
      })(),
    );
    expect(err).toMatchObject({ code: "IO_ERROR", message: expect.stringContaining(chunkHash(2)) });
  });
});
