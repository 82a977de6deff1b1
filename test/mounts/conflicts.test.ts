// What a mount does when both sides changed: conflicts keep both versions, a first mount of two
// differing sides is refused unless told which side stays, a stopped mount catches up with both
// sides' changes, a read-only mount only follows, and nothing is written through a swapped-in symlink.
import { mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAfsError } from "../../src/core/errors.js";
import { Mount } from "../../src/mounts/mount.js";
import { write } from "../../src/ops/write.js";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";
import { settle, tree, until, worldsOn } from "./helpers.js";

/** No background rounds: each side syncs only when flushed, so a test decides the interleaving. */
const MANUAL = { debounceMs: 3_600_000 };
const CONFLICT_NAME = /^f\.conflict-h-\d{8}T\d{6}Z(-\d+)?\.txt$/;

const read = async (dir: string, rel: string): Promise<string> => readFile(join(dir, rel), "utf8");
const conflictCopies = async (dir: string): Promise<string[]> =>
  (await readdir(dir)).filter((n) => n.includes(".conflict-"));

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`mount conflicts on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it("a file written on both sides before a sync keeps both contents", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "base");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await w.mount(b, { workspace: ws, ...MANUAL });
      await writeFile(join(a.dir, "f.txt"), "from a");
      await writeFile(join(b.dir, "f.txt"), "from b");
      await a.mount?.flush();
      await b.mount?.flush();
      await settle(a, b);
      expect(await tree(a.dir)).toEqual(await tree(b.dir));
      expect(await read(a.dir, "f.txt")).toBe("from a");
      const [copy] = await conflictCopies(a.dir);
      expect(copy).toMatch(CONFLICT_NAME);
      expect(await read(a.dir, copy as string)).toBe("from b");
      // Uploaded too, and counted where it happened.
      const vol = await a.afs.workspaces.volume(ws);
      expect((await vol.readFile(`/${copy}`)).toString()).toBe("from b");
      expect(b.mount?.status()).toMatchObject({ conflicts: 1, conflictPaths: ["/f.txt"], pending: 0 });
      // The mount table reports it for any process (afs status), and counts on across a restart.
      const [row] = await b.afs.mounts.list();
      expect(row?.report).toMatchObject({ state: "running", pid: process.pid, conflicts: 1, pending: 0 });
      await b.mount?.stop();
      expect((await b.afs.mounts.list())[0]?.report?.state).toBe("stopped");
      await w.mount(b, { workspace: ws, ...MANUAL });
      expect(b.mount?.status().conflicts).toBe(1);
      // The event log reports it: the copy's upload is a "conflict" event.
      const logged = await a.afs.events.list(ws, { ops: ["conflict"] });
      expect(logged.events.map((e) => [e.path, e.actor])).toEqual([[`/${copy}`, "b"]]);
    });

    it("a stale upload never overwrites a newer change made through the engine", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "base");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await write(await a.afs.workspaces.volume(ws), { path: "/f.txt", content: "engine" });
      await writeFile(join(a.dir, "f.txt"), "disk");
      await a.mount?.flush();
      expect(await read(a.dir, "f.txt")).toBe("engine");
      const [copy] = await conflictCopies(a.dir);
      expect(await read(a.dir, copy as string)).toBe("disk");
      expect((await (await a.afs.workspaces.volume(ws)).readFile("/f.txt")).toString()).toBe("engine");
    });

    it("stopped, then edited on both sides, then started: both sides' changes are reconciled", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      for (const f of ["x.txt", "y.txt", "z.txt", "f.txt"]) await writeFile(join(a.dir, f), "base");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await w.mount(b, { workspace: ws, ...MANUAL });
      await b.mount?.stop();

      await writeFile(join(b.dir, "x.txt"), "b edit");
      await writeFile(join(b.dir, "new.txt"), "b new");
      await rm(join(b.dir, "z.txt"));
      await writeFile(join(b.dir, "f.txt"), "from b");
      await writeFile(join(a.dir, "y.txt"), "a edit");
      await writeFile(join(a.dir, "f.txt"), "from a");
      await a.mount?.flush();

      await w.mount(b, { workspace: ws, ...MANUAL });
      await settle(b, a);
      const t = await tree(b.dir);
      expect(t).toEqual(await tree(a.dir));
      expect(t).toMatchObject({ "x.txt": "b edit", "new.txt": "b new", "y.txt": "a edit", "f.txt": "from a" });
      expect(t["z.txt"]).toBeUndefined();
      const [copy] = await conflictCopies(b.dir);
      expect(copy).toMatch(CONFLICT_NAME);
      expect(t[copy as string]).toBe("from b");
    });

    it("refuses a first mount of two differing sides, naming prefer; each prefer keeps both versions", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "remote");
      await writeFile(join(a.dir, "same.txt"), "same");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await a.mount?.stop();

      const sides = async (name: string) => {
        const m = await w.machine(name);
        await mkdir(m.dir, { recursive: true });
        await writeFile(join(m.dir, "f.txt"), "local");
        await writeFile(join(m.dir, "same.txt"), "same");
        await writeFile(join(m.dir, "only-local.txt"), "mine");
        return m;
      };
      const b = await sides("b");
      const refused = await Mount.start(b.afs, { workspace: ws, dir: b.dir, host: "h" }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAfsError(refused) && refused.code).toBe("CONFLICT");
      expect(String((refused as Error).message)).toMatch(/\/f\.txt.*prefer/);
      expect(await b.afs.mounts.list()).toEqual([]);
      expect(await tree(b.dir)).toEqual({ "f.txt": "local", "only-local.txt": "mine", "same.txt": "same" });

      // prefer remote: the workspace's version at the path, the local one beside it.
      await w.mount(b, { workspace: ws, prefer: "remote", ...MANUAL });
      expect(await read(b.dir, "f.txt")).toBe("remote");
      const [bCopy] = await conflictCopies(b.dir);
      expect(await read(b.dir, bCopy as string)).toBe("local");
      await b.mount?.stop();
      const vol = await b.afs.workspaces.volume(ws);
      expect((await vol.readFile(`/${bCopy}`)).toString()).toBe("local");
      expect((await vol.readFile("/only-local.txt")).toString()).toBe("mine");

      // prefer local: the local version at the path (uploaded), the workspace's beside it.
      const c = await sides("c");
      await writeFile(join(c.dir, "f.txt"), "local c");
      await w.mount(c, { workspace: ws, prefer: "local", ...MANUAL });
      expect(await read(c.dir, "f.txt")).toBe("local c");
      expect((await vol.readFile("/f.txt")).toString()).toBe("local c");
      const copies = await conflictCopies(c.dir);
      const contents = await Promise.all(copies.map((n) => read(c.dir, n)));
      expect(contents).toContain("remote");
      for (const n of copies) expect((await vol.readFile(`/${n}`)).toString()).toBe(await read(c.dir, n));
    });

    it("read-only: the directory follows the workspace, local edits stay local and are counted", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "base");
      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws, readonly: true });
      await writeFile(join(a.dir, "f.txt"), "a edit");
      await until(async () => (await tree(b.dir))["f.txt"] === "a edit", "a's edit in the read-only directory");
      await writeFile(join(b.dir, "mine.txt"), "local only");
      await until(async () => (await b.mount?.flush())?.pending === 1, "the local edit counted as pending");
      expect(await (await a.afs.workspaces.volume(ws)).stat("/mine.txt")).toBeNull();
      await a.mount?.flush();
      expect((await tree(a.dir))["mine.txt"]).toBeUndefined();
    });

    it("a directory swapped for a symlink while a remote write targets it writes nothing outside", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const canary = await tempDir("afs-canary-");
      try {
        const ws = w.workspace();
        await mkdir(join(a.dir, "d"), { recursive: true });
        await writeFile(join(a.dir, "d/f.txt"), "f");
        await w.mount(a, { workspace: ws, ...MANUAL });
        await w.mount(b, { workspace: ws, ...MANUAL });
        await rm(join(b.dir, "d"), { recursive: true });
        await symlink(canary.dir, join(b.dir, "d"));
        await write(await a.afs.workspaces.volume(ws), { path: "/d/x.txt", content: "remote" });
        await settle(b, a, b);
        expect(await readdir(canary.dir)).toEqual([]);
        // Both versions survive: the workspace's directory at the path, the local symlink beside it.
        const t = await tree(b.dir);
        expect(t).toMatchObject({ d: "dir", "d/f.txt": "f", "d/x.txt": "remote" });
        const links = Object.entries(t).filter(([k]) => k.startsWith("d.conflict-"));
        expect(links).toEqual([[expect.stringMatching(/^d\.conflict-h-/), `->${canary.dir}`]]);
        expect(await tree(a.dir)).toEqual(t);
        expect(await readdir(canary.dir)).toEqual([]);
      } finally {
        await canary.cleanup();
      }
    });
  });
}
