// Conflict retry under contention, on every store under test: many writers racing for one
// workspace's revision all finish with every write present (none starves), and a writer that lost
// a race pauses before its next try (none spins), under the one policy of core/retry.ts. Then the
// same through the engine: several engines (as several processes would) writing, editing and
// checkpointing one workspace at once.
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { EMPTY_SHA256 } from "../../src/core/hash.js";
import { RETRY, retryIfConflict, retryOnConflict } from "../../src/core/retry.js";
import { replace } from "../../src/ops/replace.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { Afs } from "../../src/workspace/afs.js";
import { testStores } from "../contract/stores.js";
import { startRedis } from "../helpers/redis-server.js";
import { tempDir } from "../helpers/tmp.js";

const CONNECTIONS = 4;
const WRITERS = 32;
const WRITES = 5;

describe.each(testStores())("conflict retry under contention (%s)", (name) => {
  async function setup(prefix: string) {
    const home = await tempDir("afs-contention-");
    const redis = name === "redis" ? await startRedis() : null;
    const url = redis ? `${redis.url}?prefix=${prefix}` : `sqlite:${home.dir}/afs.db`;
    return {
      url,
      home: home.dir,
      async cleanup() {
        await redis?.stop();
        await home.cleanup();
      },
    };
  }

  it(`${WRITERS} writers on ${CONNECTIONS} connections racing for one revision: all land, each lost try pauses`, async () => {
    const env = await setup("race");
    const engine = await Afs.open({ home: env.home, store: env.url });
    const stores: Store[] = [];
    try {
      await engine.workspaces.create("shared");
      for (let c = 0; c < CONNECTIONS; c++) stores.push(await openStore(env.url));
      const tries: number[] = Array(WRITERS).fill(0);
      const pauses: number[] = [];
      const writer = async (w: number): Promise<void> => {
        const store = stores[w % CONNECTIONS] as Store;
        for (let i = 0; i < WRITES; i++) {
          let lostAt: number | null = null;
          await retryOnConflict(
            async () => {
              if (lostAt !== null) pauses.push(performance.now() - lostAt);
              tries[w] = (tries[w] ?? 0) + 1;
              const ws = await store.getWorkspace("shared");
              const path = `/w${w}/f${i}`;
              // Planning a change takes a round trip or some I/O: time for another writer to win
              // (SQLite answers synchronously, so the I/O is a turn of the event loop).
              await store.overlayGet("shared", [path]);
              await new Promise((turn) => setImmediate(turn));
              const landed = await retryIfConflict(
                store.commit("shared", {
                  expectRevision: ws?.revision ?? -1,
                  set: [{ path, entry: { kind: "file", hash: EMPTY_SHA256, size: 0, mode: 0o644, mtime: 1 } }],
                  events: [
                    { op: "write", path, oldHash: null, newHash: EMPTY_SHA256, actor: `w${w}`, surface: "test" },
                  ],
                }),
              );
              if (landed === RETRY) lostAt = performance.now();
              return landed;
            },
            { giveUp: () => new AfsError("TIMEOUT", `writer ${w} starved`) },
          );
        }
      };
      await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));

      // None starves: every write of every writer is there, once.
      expect((await engine.workspaces.get("shared")).revision).toBe(WRITERS * WRITES);
      const events = await stores[0]?.listEvents("shared", 0, 10_000);
      expect(new Set(events?.map((e) => e.path)).size).toBe(WRITERS * WRITES);
      // There was contention to speak of, and no writer needed an unreasonable number of tries.
      const lost = tries.reduce((a, b) => a + b, 0) - WRITERS * WRITES;
      expect(lost).toBeGreaterThan(WRITERS);
      expect(pauses).toHaveLength(lost);
      expect(Math.max(...tries)).toBeLessThan(WRITES * 200);
      // None spins: a try after a lost race waits for a timer, not just a turn of the microtask
      // queue (a few microseconds); timers of 1 ms or less may fire a little early, so the mean is
      // what is compared.
      const mean = pauses.reduce((a, b) => a + b, 0) / pauses.length;
      expect(mean).toBeGreaterThan(0.3);
    } finally {
      for (const s of stores) await s.close();
      await engine.close();
      await env.cleanup();
    }
  }, 120_000);

  it("several engines writing, editing and checkpointing one workspace at once: every change lands", async () => {
    const env = await setup("engines");
    const engines = await Promise.all(
      Array.from({ length: 4 }, (_, i) => Afs.open({ home: env.home, store: env.url, actor: `engine${i}` })),
    );
    try {
      const [first] = engines as [Afs];
      await first.workspaces.create("shared");
      const log = await first.workspaces.volume("shared");
      await log.writeFile("/log.txt", Buffer.from("start\n"), { op: "write" });
      const volumes = await Promise.all(engines.map((e) => e.workspaces.volume("shared")));
      const work = engines.flatMap((engine, e) => [
        // Writers of new files.
        ...Array.from({ length: 4 }, async (_, w) => {
          for (let i = 0; i < 5; i++) {
            await volumes[e]?.writeFile(`/e${e}/w${w}/f${i}.txt`, Buffer.from(`${e}.${w}.${i}\n`), { op: "write" });
          }
        }),
        // Edits of one shared file: each must re-read it after a lost race, and none is lost.
        (async () => {
          for (let i = 0; i < 5; i++) {
            const volume = volumes[e];
            if (!volume) throw new Error("no volume");
            await replace(volume, { path: "/log.txt", old: "start\n", new: `start\ne${e}.${i}\n` });
          }
        })(),
        // Checkpoints moving head under the writers' feet.
        (async () => {
          for (let i = 0; i < 2; i++) await engine.checkpoints.create("shared");
        })(),
      ]);
      await Promise.all(work);

      const volume = volumes[0];
      if (!volume) throw new Error("no volume");
      for (let e = 0; e < engines.length; e++) {
        for (let w = 0; w < 4; w++) {
          for (let i = 0; i < 5; i++) {
            expect((await volume.readFile(`/e${e}/w${w}/f${i}.txt`)).toString()).toBe(`${e}.${w}.${i}\n`);
          }
        }
      }
      const lines = (await volume.readFile("/log.txt")).toString().split("\n");
      for (let e = 0; e < engines.length; e++) {
        for (let i = 0; i < 5; i++) expect(lines).toContain(`e${e}.${i}`);
      }
    } finally {
      for (const e of engines) await e.close();
      await env.cleanup();
    }
  }, 120_000);
});
