// The Store contract against RedisStore on a real redis-server (started for this file), when
// AFS_TEST_STORES includes redis.
import { describe } from "vitest";
import { storeChunksContract } from "./store-chunks-contract.js";
import { storeContract } from "./store-contract.js";
import { storeRepackContract } from "./store-repack-contract.js";
import { redisFactory, storeEnabled } from "./stores.js";

describe.runIf(storeEnabled("redis"))("redis", () => {
  const { factory, raw } = redisFactory();
  // Redis passes the whole contract: a test it may skip would be listed in `skip` with its reason.
  storeContract("redis", factory, { skip: [] });
  storeChunksContract("redis", factory, { skip: [] });
  storeRepackContract("redis", factory, raw, { skip: [] });
});
