// Two connections to one store (each in AFS_TEST_STORES: one SQLite file, one Redis database): a
// CLI-like child process writes files in a loop while this process reads, checkpoints and diffs.
// Every checkpoint must be a consistent cut: complete files only, holding at least every write
// acknowledged before the checkpoint began; and checkpoints must land while the writer keeps going.
import { setImmediate as yieldToEvents } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { testStores } from "../contract/stores.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import { tempDir } from "../helpers/tmp.js";
import { readStamp } from "./content.js";
import { finish, startAt, Worker } from "./harness.js";

/** Typically 3–15 s; the bound leaves room for a loaded 2-core machine running other suites. */
const TEST_TIMEOUT_MS = 120_000;

const STARTUP_MS = 30_000;
const MAX_CHECKPOINTS = 25;
const PARENT_MS = 15_000;

let workers: Worker[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  workers = [];
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe.each(testStores())("a writer process and a checkpointing process on one store: %s", (storeName) => {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    if (storeName === "redis") redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it(
    "every checkpoint holds complete writes, including all those acknowledged before it",
    async () => {
      const { dir: home, cleanup } = await tempDir("afs-two-");
      cleanups.push(cleanup);
      // SQLite: the default file in the shared home; Redis: one database both processes open.
      const store = redis ? `${redis.url}?prefix=two${process.pid}` : undefined;
      const afs = await Afs.open({ home, actor: "parent", store });
      cleanups.push(() => afs.close());
      await afs.workspaces.create("shared");
      const volume = await afs.workspaces.volume("shared");

      const writer = Worker.spawn(
        "writer",
        "loop",
        { home, workspace: "shared", id: "child", limit: 50_000, timeLimitMs: 40_000 },
        store ? { AFS_STORE: store } : {},
      );
      workers.push(writer);
      // path → sequence number of its latest acknowledged write
      const acked = new Map<string, number>();
      const ackedSha = new Map<string, string>();
      writer.onMessage((m) => {
        if (m.t !== "ack") return;
        acked.set(String(m.path), Number(m.i));
        ackedSha.set(String(m.path), String(m.sha256));
      });
      await writer.waitFor((m) => m.t === "ready", STARTUP_MS, "ready");
      writer.send({ at: startAt() });
      await writer.waitFor((m) => m.t === "ack", STARTUP_MS, "first ack");

      /** path → stamp sequence number of a checkpoint's files, after checking each is complete. */
      const readCheckpoint = async (name: string): Promise<Map<string, number>> => {
        const files = new Map<string, number>();
        const { changes } = await afs.checkpoints.diff("shared", "initial", name);
        for (const c of changes) {
          expect(c.status, `${name}: ${c.path} against the empty initial checkpoint`).toBe("added");
          if (c.kind === "dir") continue;
          expect(c.kind).toBe("file");
          const blob = await internalsOf(afs).store.getBlob(String(c.new_sha256));
          expect(blob, `${name}: blob of ${c.path}`).not.toBeNull();
          const data = blob as Buffer;
          expect(sha256(data), `${name}: ${c.path} does not match its hash`).toBe(c.new_sha256);
          const stamp = readStamp(data);
          if (!stamp.ok) throw new Error(`${name}: ${c.path} is not a complete write: ${stamp.reason}`);
          expect(stamp.stamp.path, `${name}: ${c.path} holds another file's content`).toBe(c.path);
          files.set(c.path, stamp.stamp.i);
        }
        return files;
      };

      const deadline = Date.now() + PARENT_MS;
      let previous: { name: string; files: Map<string, number> } | null = null;
      let created = 0;
      let liveReads = 0;
      for (let n = 0; created < MAX_CHECKPOINTS && Date.now() < deadline && writer.running; n++) {
        // This process's store calls may never leave the microtask queue: let the writer's acks in.
        await yieldToEvents();
        const before = new Map(acked);

        // Live reads see complete files no older than what was acknowledged.
        for (const [path, i] of [...before].slice(0, 8)) {
          const stamp = readStamp(await volume.readFile(path));
          if (!stamp.ok) throw new Error(`live ${path} is not a complete write: ${stamp.reason}`);
          expect(stamp.stamp.i, `live ${path} went back in time`).toBeGreaterThanOrEqual(i);
          liveReads++;
        }

        const name = `parent-${n}`;
        const cp = await afs.checkpoints.create("shared", { name });
        if (!cp.created) {
          const newest = Math.max(-1, ...before.values());
          await writer.waitFor((m) => m.t === "ack" && Number(m.i) > newest, 5_000, "another write");
          continue;
        }
        created++;
        const files = await readCheckpoint(name);
        const missing = [...before].filter(([path, i]) => (files.get(path) ?? -1) < i);
        expect(missing, `${name} lacks writes acknowledged before it began`).toEqual([]);

        if (previous) {
          // Between consecutive checkpoints files only move forward, and the diff agrees.
          for (const [path, i] of previous.files) {
            expect(files.get(path) ?? -1, `${name}: ${path} went back from ${previous.name}`).toBeGreaterThanOrEqual(i);
          }
          const { changes } = await afs.checkpoints.diff("shared", previous.name, name);
          const changed = new Set(changes.filter((c) => c.kind === "file").map((c) => c.path));
          for (const [path, i] of files) {
            expect(changed.has(path), `${previous.name}→${name}: diff of ${path}`).toBe(previous.files.get(path) !== i);
          }
        }
        previous = { name, files };
      }

      writer.send({ t: "stop" });
      await finish(writer, 20_000);
      const done = writer.messages.find((m) => m.t === "done");
      console.info(
        `two connections (${storeName}): ${created} checkpoints, ${liveReads} live reads, ${String(done?.writes)} writes`,
      );
      expect(created, "too few checkpoints overlapped the writer to test anything").toBeGreaterThanOrEqual(5);

      // With the writer gone, the live state is exactly its last acknowledged writes.
      for (const [path, sha] of ackedSha) expect((await volume.stat(path))?.sha256, path).toBe(sha);
      const last = await afs.checkpoints.create("shared", { name: "final" });
      expect(last.created).toBe(true);
      const files = await readCheckpoint("final");
      expect(files).toEqual(acked);
      const fsck = await afs.maintenance.fsck();
      expect(fsck.problems).toEqual([]);
      expect(fsck.ok).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
