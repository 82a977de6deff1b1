// The stores the contract suites run against, by name: AFS_TEST_STORES (default "sqlite,redis",
// a comma list) picks them. Each factory gives a fresh, empty store and a cleanup.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { createClient } from "redis";
import { afterAll, beforeAll } from "vitest";
import type { Hash } from "../../src/core/hash.js";
import { checkedStore } from "../../src/store/checked-store.js";
import { openStore } from "../../src/store/open.js";
import { Keys } from "../../src/store/redis/keys.js";
import { RedisStore, type RedisStoreOptions } from "../../src/store/redis/store.js";
import { SqliteStore, type SqliteStoreOptions } from "../../src/store/sqlite/store.js";
import type { Store } from "../../src/store/store.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import type { StoreFactory } from "./store-contract.js";
import type { RawAccess, RawValues, ValueKind } from "./store-repack-contract.js";

export const STORE_NAMES = ["sqlite", "redis"] as const;
export type StoreName = (typeof STORE_NAMES)[number];

/** The stores this run tests (AFS_TEST_STORES), in the order given. */
export function testStores(): StoreName[] {
  const raw = process.env.AFS_TEST_STORES ?? STORE_NAMES.join(",");
  const names = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!(STORE_NAMES as readonly string[]).includes(n)) {
      throw new Error(`AFS_TEST_STORES names an unknown store ${JSON.stringify(n)}; known: ${STORE_NAMES.join(", ")}`);
    }
  }
  return names as StoreName[];
}

export const storeEnabled = (name: StoreName): boolean => testStores().includes(name);

/**
 * A SQLite store with options openStore has no URL for, wrapped in the contract's checks as
 * openStore wraps every store (for tests of what only SQLite promises).
 */
export const openSqlite = (path: string, options?: SqliteStoreOptions): Store =>
  checkedStore(SqliteStore.open(path, options));

/** A Redis store with options openStore has no URL for, wrapped as openStore wraps every store. */
export const openRedis = async (url: string, options?: RedisStoreOptions): Promise<Store> =>
  checkedStore(await RedisStore.open(url, options));

/** Contract suites get their stores as users do: from a URL, through openStore. */
export const sqliteFactory: StoreFactory = async () => {
  const dir = await mkdtemp(join(tmpdir(), "afs-store-"));
  const store = await openStore(`sqlite:${join(dir, "afs.db")}`);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** A SQLite store's values through a second connection to its file. */
export const sqliteRaw: RawAccess = async (store: Store): Promise<RawValues> => {
  const db = new Database(store.url.slice("sqlite:".length));
  const table = (kind: ValueKind) => (kind === "blob" ? "blobs" : "chunks");
  return {
    set: async (kind, hash, stored) => {
      const { changes } = db.prepare(`UPDATE ${table(kind)} SET data = ? WHERE hash = ?`).run(stored, hash);
      if (changes !== 1) throw new Error(`no ${kind} ${hash} to overwrite`);
    },
    get: async (kind, hash) =>
      (db
        .prepare(`SELECT data FROM ${table(kind)} WHERE hash = ?`)
        .pluck()
        .get(hash) as Buffer | undefined) ?? null,
    close: async () => {
      db.close();
    },
  };
};

/** The key prefix of each Redis store a factory opened, so raw access finds its keys. */
const prefixes = new WeakMap<Store, string>();

let keyspace = 0;

/**
 * Starts one redis-server for the calling test file (beforeAll/afterAll) and returns a factory
 * giving each test a store under a fresh key prefix, so tests never see each other's keys.
 */
export function redisFactory(): { factory: StoreFactory; server: () => RedisServer; raw: RawAccess } {
  let server: RedisServer | undefined;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const current = (): RedisServer => {
    if (!server) throw new Error("redis-server is not running (redisFactory's beforeAll did not run)");
    return server;
  };
  const factory: StoreFactory = async () => {
    const prefix = `t${process.pid}x${++keyspace}`;
    const store = await openStore(`${current().url}?prefix=${prefix}`);
    prefixes.set(store, prefix);
    return { store, cleanup: () => store.close() };
  };
  const raw: RawAccess = async (store) => {
    const prefix = prefixes.get(store);
    if (prefix === undefined) throw new Error("raw access needs a store made by this factory");
    return redisRaw(current().url, new Keys(prefix));
  };
  return { factory, server: current, raw };
}

/** A Redis store's values through a client of its own. */
async function redisRaw(url: string, keys: Keys): Promise<RawValues> {
  const client = createClient({ url, RESP: 2 });
  await client.connect();
  const key = (kind: ValueKind, hash: Hash) => (kind === "blob" ? keys.object("blob", hash) : keys.chunk(hash));
  return {
    set: async (kind, hash, stored) => {
      if ((await client.exists(key(kind, hash))) !== 1) throw new Error(`no ${kind} ${hash} to overwrite`);
      await client.hSet(key(kind, hash), "d", stored);
    },
    get: async (kind, hash) => {
      const d = await client.withTypeMapping({ 36: Buffer }).sendCommand(["HGET", key(kind, hash), "d"]);
      return (d as unknown as Buffer | null) ?? null;
    },
    close: async () => {
      await client.close();
    },
  };
}
