// grep's content index built by the background builder, on every store: a search finding more
// contents unindexed than it indexes itself scans them (same answers) and says so; the builder
// indexes every workspace's files and live rows, one builder at a time, taking over a dead one's place,
// then maps each head tree's contents to paths (a new process's first search then lists nothing); a
// map whose writer was killed midway is never used.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Hash } from "../../src/core/hash.js";
import { type GrepArgs, grep } from "../../src/ops/index.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempDir } from "../helpers/tmp.js";
import { REPO } from "../process/harness.js";

const MAP_WRITER = join(REPO, "test/search/map-writer-process.ts");

/** Every content hash the workspaces' files hold. */
async function allHashes(afs: Afs): Promise<Hash[]> {
  const out: Hash[] = [];
  for (const { name } of await afs.workspaces.list()) {
    for await (const s of (await afs.workspaces.volume(name)).walk("/"))
      if (s.kind === "file" && s.sha256) out.push(s.sha256);
  }
  return out;
}

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
      return (await openHome(env)).afs;
    }

    /** A fresh home and store, with what reopens them (a new process, as far as the index goes). */
    async function openHome(env: Record<string, string> = {}) {
      const home = await tempDir("afs-home-");
      // A key prefix of its own on the shared server: a fresh, empty store.
      const store = redis ? `${redis().url}?prefix=ib${process.pid}x${++stores}` : `sqlite:${home.dir}/afs.db`;
      const reopen = async (): Promise<Afs> => {
        const afs = await Afs.open({ home: home.dir, store, actor: "test", env: { ...process.env, ...env } });
        cleanups.push(() => afs.close());
        return afs;
      };
      cleanups.push(home.cleanup);
      return { afs: await reopen(), reopen, home: home.dir, store };
    }

    /** A tree of text files (a few holding a rare literal, one binary), checkpointed, then edited live (a new file, and an `edit`). */
    async function plantTree(afs: Afs, edit = true): Promise<void> {
      await afs.workspaces.create("a");
      for (let i = 0; i < 30; i++)
        await write(afs, "a", `/d${i % 4}/e${i % 3}/f${i}.txt`, `file ${i}\n${i % 7 === 2 ? "zzq_rare\n" : ""}`);
      await (await afs.workspaces.volume("a")).writeFile("/bin.dat", Buffer.from("zzq_rare\0\x01"), { op: "write" });
      await afs.checkpoints.create("a", { name: "one" });
      // Edited before any search: the stored tree's map still serves, the edits are read live.
      if (edit) await write(afs, "a", "/d2/e2/f2.txt", "no longer here\n");
      await write(afs, "a", "/live.txt", "a live zzq_rare\n");
    }

    /** A search through the index, counting the volume's listings; and the same search by a plain scan. */
    async function search(
      afs: Afs,
      more: Partial<GrepArgs> = {},
    ): Promise<{ listings: number; found: unknown; scanned: unknown }> {
      const volume = await afs.workspaces.volume("a");
      const args = { pattern: "zzq_rare", files_with_matches: true, ...more };
      const walkList = vi.spyOn(volume, "walkList");
      const found = await grep(volume, args, indexesOf(afs));
      const listings = walkList.mock.calls.length;
      walkList.mockRestore();
      return { listings, found, scanned: await grep(volume, args) };
    }

    it("maps each head tree once it is indexed, so a new process's first search lists nothing", async () => {
      const { afs, reopen } = await openHome();
      await plantTree(afs);
      const root = (await (await afs.workspaces.volume("a")).storedBase?.("/"))?.tree as Hash;
      expect(afs.indexes.text.hasTreeMap(root)).toBe(false);
      expect(await afs.indexes.buildInBackground(process.pid)).toMatchObject({ mapped: 1 });
      expect(afs.indexes.text.hasTreeMap(root)).toBe(true);
      expect((await afs.indexes.status()).workspaces).toMatchObject([{ name: "a", mapped: true }]);

      const first = await search(await reopen());
      expect(first.found).toEqual(first.scanned);
      expect(first.found).toMatchObject({ files: ["/d0/e1/f16.txt", "/d1/e0/f9.txt", "/d3/e2/f23.txt", "/live.txt"] });
      // Candidates' paths came from the map: the tree was not listed.
      expect(first.listings).toBe(0);
      // A subdirectory's search takes its files from the root's map too; a live edit below it is read live.
      const below = await search(await reopen(), { path: "/d2" });
      expect(below.found).toEqual(below.scanned);
      expect(below.found).toMatchObject({ files: [] });
      expect(below.listings).toBe(0);
      const sub = await search(await reopen(), { path: "/d1/e0" });
      expect(sub.found).toMatchObject({ files: ["/d1/e0/f9.txt"] });
      expect(sub.listings).toBe(0);
      // The foreground build maps heads too (here: already mapped, found so).
      expect((await afs.indexes.build([])).text.mapped).toBe(1);
    });

    it("after checkpoints move the head, answers from an earlier head's map and what changed since, listing nothing", async () => {
      const { afs, reopen } = await openHome();
      await plantTree(afs);
      expect(await afs.indexes.buildInBackground(process.pid)).toMatchObject({ mapped: 1 });
      // Two checkpoints later, with a rename, a delete, a new file and a live edit: no map of the
      // head's tree, and none is written (no search lists it).
      await afs.checkpoints.create("a", { name: "two" });
      const volume = await afs.workspaces.volume("a");
      await volume.rename("/d1/e0/f9.txt", "/moved/f9.txt", {});
      await volume.remove("/d3/e2/f23.txt", {});
      await write(afs, "a", "/d0/new.txt", "new zzq_rare\n");
      await afs.checkpoints.create("a", { name: "three" });
      await write(afs, "a", "/d0/e1/f16.txt", "edited live\n");
      const head = (await volume.storedBase?.("/"))?.tree as Hash;
      expect(afs.indexes.text.hasTreeMap(head)).toBe(false);

      const later = await reopen();
      const whole = await search(later);
      expect(whole.found).toEqual(whole.scanned);
      expect(whole.found).toMatchObject({ files: ["/d0/new.txt", "/live.txt", "/moved/f9.txt"] });
      expect(whole.listings).toBe(0);
      const below = await search(later, { path: "/d0" });
      expect(below.found).toEqual(below.scanned);
      expect(below.found).toMatchObject({ files: ["/d0/new.txt"] });
      // A subdirectory by the map of the tree above it.
      expect(below.listings).toBe(0);
      // A directory that was a file when the map was written: all of it is new, read live.
      await (await later.workspaces.volume("a")).remove("/bin.dat", {});
      await write(later, "a", "/bin.dat/inside.txt", "zzq_rare inside\n");
      await later.checkpoints.create("a", { name: "four" });
      const replaced = await search(later, { path: "/bin.dat" });
      expect(replaced.found).toEqual(replaced.scanned);
      expect(replaced.found).toMatchObject({ files: ["/bin.dat/inside.txt"] });
      // Counting and matching lines agree with a scan too.
      for (const more of [
        { files_with_matches: false, count: true },
        { files_with_matches: false },
      ] as Partial<GrepArgs>[]) {
        const r = await search(later, more);
        expect(r.found).toEqual(r.scanned);
      }
    });

    it("leaves no map used when its writer is killed midway; the next builder writes it", async () => {
      const { afs, reopen, home, store } = await openHome();
      await plantTree(afs, false);
      // Indexed, but no map yet.
      expect(await afs.indexes.text.build(await allHashes(afs))).toMatchObject({ indexed: 32 });
      const root = (await (await afs.workspaces.volume("a")).storedBase?.("/"))?.tree as Hash;
      const child = spawn(process.execPath, ["--import", "tsx", MAP_WRITER, home, store, "a"], {
        cwd: REPO,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (d: Buffer) => d.toString().includes("written") && resolve());
          child.once("exit", (code) => reject(new Error(`the map writer exited (${code}) before it was killed`)));
        });
      } finally {
        child.kill("SIGKILL");
        await exited;
      }
      // Half a map on disk, under its dead writer's mark: never used.
      const db = internalsOf(afs).searchDb.db;
      expect(db.prepare("SELECT generation FROM text_trees WHERE hash = ?").pluck().get(root)).toBe(
        -(child.pid as number),
      );
      // Its first two files: the binary one (left out of maps) and a text.
      expect(db.prepare("SELECT count(*) FROM text_tree_files").pluck().get()).toBe(1);
      expect(afs.indexes.text.hasTreeMap(root)).toBe(false);
      // A search lists the tree, and answers as a scan does (filtered: it records no map itself).
      const after = await search(await reopen(), { include: "*.txt" });
      expect(after.found).toEqual(after.scanned);
      expect(after.found).toMatchObject({
        files: ["/d0/e1/f16.txt", "/d1/e0/f9.txt", "/d2/e2/f2.txt", "/d3/e2/f23.txt", "/live.txt"],
      });
      expect(after.listings).toBe(1);
      // A builder takes the dead writer's rows over and completes the map: then nothing is listed.
      const builder = await reopen();
      expect(await builder.indexes.buildInBackground(process.pid)).toMatchObject({ indexed: 0, mapped: 1 });
      expect(db.prepare("SELECT count(*) FROM text_tree_files").pluck().get()).toBe(30);
      const mapped = await search(await reopen(), { include: "*.txt" });
      expect(mapped.found).toEqual(after.found);
      expect(mapped.listings).toBe(0);
    });

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
      // Files walked: the head trees' (8) and the live rows (2), each a content indexed.
      expect(built).toMatchObject({ files: 10, indexed: 10 });
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
