// The stores the contract suites run against, by name: AFS_TEST_STORES (default "sqlite,redis",
// a comma list) picks them. Each factory gives a fresh, empty store and a cleanup.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { RedisStore } from "../../src/store/redis/store.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import type { StoreFactory } from "./store-contract.js";

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

export const sqliteFactory: StoreFactory = async () => {
  const dir = await mkdtemp(join(tmpdir(), "afs-store-"));
  const store = SqliteStore.open(join(dir, "afs.db"));
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

let keyspace = 0;

/**
 * Starts one redis-server for the calling test file (beforeAll/afterAll) and returns a factory
 * giving each test a store under a fresh key prefix, so tests never see each other's keys.
 */
export function redisFactory(): { factory: StoreFactory; server: () => RedisServer } {
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
    const store = await RedisStore.open(current().url, { prefix: `t${process.pid}x${++keyspace}` });
    return { store, cleanup: () => store.close() };
  };
  return { factory, server: current };
}
