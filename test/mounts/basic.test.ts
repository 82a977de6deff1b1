// Mounts on real directories: two machines (two homes) on one store, changes made in either
// directory or through the engine appear in the other directory.
import { chmod, mkdir, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { Mount } from "../../src/mounts/mount.js";
import { write } from "../../src/ops/write.js";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { settle, tree, until, worldsOn } from "./helpers.js";

/** No background rounds: each side syncs only when flushed. */
const MANUAL = { debounceMs: 3_600_000 };

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`mounts on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it("creates a missing workspace from the directory, and an empty directory receives it", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(join(a.dir, "src"), { recursive: true });
      await writeFile(join(a.dir, "src/main.ts"), "main");
      await writeFile(join(a.dir, "empty"), "");
      await w.mount(a, { workspace: ws });
      expect((await (await a.afs.workspaces.volume(ws)).readFile("/src/main.ts")).toString()).toBe("main");
      await w.mount(b, { workspace: ws });
      expect(await tree(b.dir)).toEqual(await tree(a.dir));
      expect(await tree(b.dir)).toEqual({ empty: "", src: "dir", "src/main.ts": "main" });
    });

    it("carries creates, edits, deletes, renames, modes and symlinks both ways", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws });

      await mkdir(join(a.dir, "d/e"), { recursive: true });
      await writeFile(join(a.dir, "d/e/f.txt"), "one");
      await writeFile(join(a.dir, "run.sh"), "#!/bin/sh");
      await chmod(join(a.dir, "run.sh"), 0o755);
      await symlink("d/e/f.txt", join(a.dir, "link"));
      await settle(a, b);
      expect(await tree(b.dir)).toEqual({
        d: "dir",
        "d/e": "dir",
        "d/e/f.txt": "one",
        link: "->d/e/f.txt",
        "run.sh": "#!/bin/sh x",
      });

      await writeFile(join(b.dir, "d/e/f.txt"), "two");
      await chmod(join(b.dir, "run.sh"), 0o644);
      await rename(join(b.dir, "d/e"), join(b.dir, "d/g"));
      await rm(join(b.dir, "link"));
      await symlink("run.sh", join(b.dir, "link2"));
      await settle(b, a);
      expect(await tree(a.dir)).toEqual({
        d: "dir",
        "d/g": "dir",
        "d/g/f.txt": "two",
        link2: "->run.sh",
        "run.sh": "#!/bin/sh",
      });
      expect(await tree(a.dir)).toEqual(await tree(b.dir));
      expect(a.mount?.status()).toMatchObject({ conflicts: 0, pending: 0, state: "running", lastError: null });
      // Settled: no echo goes round (neither side uploads what it was sent, nor applies its own uploads).
      const revision = (await a.afs.workspaces.get(ws)).revision;
      await writeFile(join(a.dir, "d/g/f.txt"), "three");
      await settle(a, b, a, b);
      expect((await a.afs.workspaces.get(ws)).revision).toBe(revision + 1);
      expect(await tree(b.dir)).toEqual(await tree(a.dir));
    });

    it("syncs in the background: an editor's atomic save arrives as one content change", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "notes.md"), "v1");
      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws });
      // Write a temp file, rename it over (vim, VS Code, JetBrains do this).
      await writeFile(join(a.dir, ".notes.md.swp"), "v2");
      await rename(join(a.dir, ".notes.md.swp"), join(a.dir, "notes.md"));
      await until(async () => (await tree(b.dir))["notes.md"] === "v2", "the save to reach b");
      expect(await tree(b.dir)).toEqual({ "notes.md": "v2" });
      // One change of content (v1 → v2), never a delete and a create, and no temp file left.
      const events = await a.afs.events.list(ws, { path: "/notes.md" });
      expect(events.events.map((e) => [e.oldHash, e.newHash])).toEqual([
        [null, sha256("v1")],
        [sha256("v1"), sha256("v2")],
      ]);
      expect(await (await a.afs.workspaces.volume(ws)).stat("/.notes.md.swp")).toBeNull();
    });

    it("writes made through the ops and a checkpoint restore appear on disk", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await w.mount(a, { workspace: ws });
      await write(await b.afs.workspaces.volume(ws), { path: "/from-ops.txt", content: "hello" });
      await until(async () => (await tree(a.dir))["from-ops.txt"] === "hello", "the op's write on disk");

      await a.afs.checkpoints.create(ws, { name: "before" });
      await writeFile(join(a.dir, "later.txt"), "later");
      await writeFile(join(a.dir, "from-ops.txt"), "changed");
      await a.mount?.flush();
      expect((await (await b.afs.workspaces.volume(ws)).readFile("/later.txt")).toString()).toBe("later");
      await b.afs.checkpoints.restore(ws, "before");
      await until(async () => {
        const t = await tree(a.dir);
        return t["later.txt"] === undefined && t["from-ops.txt"] === "hello";
      }, "the restore on disk");
      expect(await tree(a.dir)).toEqual({ "from-ops.txt": "hello" });
    });

    it("hundreds of files changed at once in one directory converge in the other", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(join(a.dir, "src"), { recursive: true });
      for (let i = 0; i < 300; i++) await writeFile(join(a.dir, "src", `f${i}.ts`), `v1 ${i}`);
      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws });
      // A branch switch, in effect: most files rewritten, some removed, some new.
      for (let i = 0; i < 300; i++) {
        if (i % 10 === 0) await rm(join(b.dir, "src", `f${i}.ts`));
        else await writeFile(join(b.dir, "src", `f${i}.ts`), `v2 ${i}`);
      }
      for (let i = 0; i < 50; i++) await writeFile(join(b.dir, "src", `new${i}.ts`), `new ${i}`);
      const expected = await tree(b.dir);
      await until(async () => JSON.stringify(await tree(a.dir)) === JSON.stringify(expected), "a to match b");
      expect(Object.keys(expected)).toHaveLength(1 + 270 + 50);
      expect(a.mount?.status().conflicts).toBe(0);
    });

    it("mounts one workspace in two directories of one machine", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const ws = w.workspace();
      const second = join(a.dir, "..", "second");
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "one");
      const first = await w.mount(a, { workspace: ws });
      const other = await Mount.start(a.afs, { workspace: ws, dir: second, host: "h" });
      try {
        expect(await tree(second)).toEqual({ "f.txt": "one" });
        await writeFile(join(second, "f.txt"), "two");
        await until(async () => (await tree(a.dir))["f.txt"] === "two", "the edit in the first directory");
        expect((await a.afs.mounts.list()).map((m) => m.dir).sort()).toEqual(
          [first.status().dir, other.status().dir].sort(),
        );
        // One directory, one mount: another workspace is refused there.
        await expect(Mount.start(a.afs, { workspace: `${ws}-other`, dir: second })).rejects.toMatchObject({
          code: "ALREADY_EXISTS",
        });
      } finally {
        await other.stop();
      }
    });

    it("keeps ignored files and .git/ local, and moves a file larger than a storage chunk both ways", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(join(a.dir, ".git"), { recursive: true });
      await writeFile(join(a.dir, ".git/HEAD"), "ref: main");
      await writeFile(join(a.dir, ".gitignore"), "*.log\nbuild/\n");
      await writeFile(join(a.dir, "app.log"), "noise");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await w.mount(b, { workspace: ws, ...MANUAL });
      await mkdir(join(a.dir, "build"));
      await writeFile(join(a.dir, "build/out.js"), "built");
      const big = Buffer.alloc(9 * 1024 * 1024 + 123);
      for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
      await writeFile(join(a.dir, "big.bin"), big);
      await settle(a, b);
      expect(await tree(b.dir)).toMatchObject({ ".gitignore": "*.log\nbuild/\n" });
      expect(Object.keys(await tree(b.dir)).sort()).toEqual([".gitignore", "big.bin"]);
      expect((await readFile(join(b.dir, "big.bin"))).equals(big)).toBe(true);

      big.writeUInt32LE(0xdeadbeef, 5 * 1024 * 1024);
      await writeFile(join(b.dir, "big.bin"), big);
      await settle(b, a);
      expect((await readFile(join(a.dir, "big.bin"))).equals(big)).toBe(true);
      expect(await readFile(join(a.dir, "app.log"), "utf8")).toBe("noise");
    });
  });
}
