// The operations' contract on a versioned workspace Volume whose engine runs on the Redis store
// (a real redis-server started for this file), when AFS_TEST_STORES includes redis.
import { describe } from "vitest";
import { Afs } from "../../src/workspace/afs.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempDir } from "../helpers/tmp.js";
import { opsContract } from "./ops-contract.js";
import { redisFactory, storeEnabled } from "./stores.js";

describe.runIf(storeEnabled("redis"))("redis", () => {
  const { server } = redisFactory();
  let n = 0;
  opsContract("WorkspaceVolume on Redis", async () => {
    // Each test gets its own home (for the local search index) and its own workspace name.
    const home = await tempDir("afs-home-");
    const afs = await Afs.open({ home: home.dir, actor: "test", store: server().url });
    const name = `contract-${process.pid}-${++n}`;
    await afs.workspaces.create(name);
    return {
      volume: await afs.workspaces.volume(name),
      ...indexesOf(afs),
      cleanup: async () => {
        await afs.close();
        await home.cleanup();
      },
    };
  });
});
