// grep's content index built by the background builder, on every store: a search finding more
// contents unindexed than it indexes itself scans them (same answers) and says so; the builder
// indexes every workspace's files and live rows, one builder at a time, taking over a dead one's place.
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { grep } from "../../src/ops/index.js";
import { Afs } from "../../src/workspace/afs.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempDir } from "../helpers/tmp.js";

const write = async (afs: Afs, ws: string, path: string, text: string): Promise<void> => {
  await (await afs.workspaces.volume(ws)).writeFile(path, Buffer.from(text), { op: "write" });
};

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`the content index builder on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;
    const cleanups: (() => Promise<void>)[] = [];
    let stores = 0;
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    async function open(env: Record<string, string> = {}): Promise<Afs> {
      const home = await tempDir("afs-home-");
      // A key prefix of its own on the shared server: a fresh, empty store.
      const store = redis ? `${redis().url}?prefix=ib${process.pid}x${++stores}` : `sqlite:${home.dir}/afs.db`;
      const afs = await Afs.open({ home: home.dir, store, actor: "test", env: { ...process.env, ...env } });
      cleanups.push(home.cleanup, () => afs.close());
      return afs;
    }

    it("scans what is not indexed past the limit, then the builder indexes heads and live rows", async () => {
      const afs = await open({ AFS_INDEX_SYNC_BLOBS: "3" });
      await afs.workspaces.create("a");
      await afs.workspaces.create("b");
      for (let i = 0; i < 8; i++)
        await write(afs, "a", `/src/f${i}.txt`, `file ${i}\n${i % 3 === 0 ? "needle\n" : ""}`);
      await afs.checkpoints.create("a", { name: "one" });
      // A live row after the checkpoint, and a second workspace.
      await write(afs, "a", "/live.txt", "a live needle\n");
      await write(afs, "b", "/other.txt", "needle in b\n");
      const behind: number[] = [];
      afs.indexes.whenBehind((missing) => behind.push(missing));

      const volume = await afs.workspaces.volume("a");
      const found = await grep(volume, { pattern: "needle", files_with_matches: true }, indexesOf(afs));
      expect(found).toEqual({ mode: "files", files: ["/live.txt", "/src/f0.txt", "/src/f3.txt", "/src/f6.txt"] });
      expect(behind).toEqual([9]);
      expect((await afs.indexes.text.status()).texts).toBe(0);

      const built = await afs.indexes.buildInBackground(process.pid);
      // Files walked in the head trees (8), contents indexed with the live rows (10).
      expect(built).toMatchObject({ files: 8, indexed: 10 });
      const status = await afs.indexes.text.status();
      expect(status.texts).toBe(10);
      expect(status.building).toBeUndefined();
      // Indexed now: the same answer, and no backlog.
      expect(await grep(volume, { pattern: "needle", files_with_matches: true }, indexesOf(afs))).toEqual(found);
      expect(behind).toEqual([9]);
      // Again: nothing left to index.
      expect(await afs.indexes.buildInBackground(process.pid)).toMatchObject({ indexed: 0 });
    });

    it("runs one builder at a time, and takes over the place of one that died", async () => {
      const afs = await open();
      await afs.workspaces.create("a");
      await write(afs, "a", "/x.txt", "some text\n");
      const text = afs.indexes.text;
      // A live process (this one's parent) holds the place: no second builder.
      expect(text.claimBuilder(process.ppid)).toBe(true);
      expect(text.building()?.pid).toBe(process.ppid);
      expect(await afs.indexes.buildInBackground(process.pid)).toBeNull();
      text.releaseBuilder(process.ppid);
      // A process that has ended holds it: taken over, and released when done.
      const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
      expect(text.claimBuilder(dead)).toBe(true);
      expect(text.building()).toBeUndefined();
      expect(await afs.indexes.buildInBackground(process.pid)).toMatchObject({ indexed: 1 });
      expect(text.building()).toBeUndefined();
    });
  });
}
