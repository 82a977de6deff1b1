// Many writers on one workspace through one engine (as 32 MCP clients on one afs serve are): each
// write lands, none is lost, and none gives up as "too busy", on every store under test. Writers
// in one process take turns; a second engine on the same store (another process) still races.
import { describe, expect, it } from "vitest";
import { Afs } from "../../src/workspace/afs.js";
import { testStores } from "../contract/stores.js";
import { startRedis } from "../helpers/redis-server.js";
import { tempDir } from "../helpers/tmp.js";

const WRITERS = 64;
const WRITES = 10;

describe.each(testStores())("many writers on one workspace (%s)", (name) => {
  it(`${WRITERS} writers × ${WRITES} writes through one engine, and a second engine writing too, all land`, async () => {
    const home = await tempDir("afs-writers-");
    const redis = name === "redis" ? await startRedis() : null;
    const store = redis ? `${redis.url}?prefix=writers` : `sqlite:${home.dir}/afs.db`;
    const [one, two] = [await Afs.open({ home: home.dir, store }), await Afs.open({ home: home.dir, store })];
    try {
      await one.workspaces.create("shared");
      const [a, b] = [await one.workspaces.volume("shared"), await two.workspaces.volume("shared")];
      const writer = async (volume: typeof a, w: number): Promise<void> => {
        for (let i = 0; i < WRITES; i++) {
          await volume.writeFile(`/w${w}/f${i}.txt`, Buffer.from(`${w}:${i}\n${"x".repeat(256 * 1024)}`), {
            op: "write",
          });
        }
      };
      await Promise.all([
        ...Array.from({ length: WRITERS }, (_, w) => writer(a, w)),
        ...Array.from({ length: 4 }, (_, w) => writer(b, WRITERS + w)),
      ]);
      const total = (WRITERS + 4) * WRITES;
      expect((await one.workspaces.get("shared")).revision).toBe(total);
      for (let w = 0; w < WRITERS + 4; w++) {
        expect((await b.readFile(`/w${w}/f${WRITES - 1}.txt`)).toString()).toBe(
          `${w}:${WRITES - 1}\n${"x".repeat(256 * 1024)}`,
        );
      }
    } finally {
      await one.close();
      await two.close();
      await redis?.stop();
      await home.cleanup();
    }
  }, 120_000);
});
