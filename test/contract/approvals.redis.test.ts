// The approval part of the Store contract (and the queue over it) on a real redis-server, when AFS_TEST_STORES includes redis.
import { describe } from "vitest";
import { approvalStoreContract } from "./approval-store-contract.js";
import { redisFactory, storeEnabled } from "./stores.js";

describe.runIf(storeEnabled("redis"))("redis", () => {
  const { factory } = redisFactory();
  approvalStoreContract("redis", factory);
});
