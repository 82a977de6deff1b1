// The TokenStore contract against RedisStore on a real redis-server, when AFS_TEST_STORES includes redis.
import { describe } from "vitest";
import { redisFactory, storeEnabled } from "./stores.js";
import { tokenStoreContract } from "./token-store-contract.js";

describe.runIf(storeEnabled("redis"))("redis", () => {
  const { factory } = redisFactory();
  tokenStoreContract("redis", factory);
});
