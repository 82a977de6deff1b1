// What a mount does when the world around it misbehaves: its workspace deleted under it, a folder
// removed remotely that still holds ignored files here, a first mount where one side has a
// directory and the other a file at the same path, and a directory swapped for a symlink over and
// over while remote writes into it arrive.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { lstat, mkdir, readdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { write } from "../../src/ops/write.js";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";
import { settle, tree, until, worldsOn } from "./helpers.js";

/** No background rounds: each side syncs only when flushed. */
const MANUAL = { debounceMs: 3_600_000 };

/** Every path under `dir`, recursively (the canary's contents). */
async function everything(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort();
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`mount faults on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it("a workspace deleted while mounted puts the mount in error, saying what to do; the directory keeps its files", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      await writeFile(join(a.dir, "f.txt"), "kept");
      await w.mount(a, { workspace: ws });
      await b.afs.workspaces.delete(ws);
      // Nothing changes on disk: the mount must notice by itself.
      await until(() => a.mount?.status().state === "error", "the mount to report the deletion");
      expect(a.mount?.status().lastError).toMatch(new RegExp(`workspace ${ws} was deleted.*afs unmount`));
      const [row] = await a.afs.mounts.list();
      expect(row?.report).toMatchObject({ state: "error", lastError: expect.stringMatching(/was deleted/) });
      // A local edit does not bring it back to running, nor recreate the workspace.
      await writeFile(join(a.dir, "g.txt"), "later");
      await sleep(300);
      expect(a.mount?.status().state).toBe("error");
      await expect(a.afs.workspaces.get(ws)).rejects.toMatchObject({ code: "NOT_FOUND" });
      expect(await tree(a.dir)).toEqual({ "f.txt": "kept", "g.txt": "later" });
      // Stopping it (afs unmount) works and leaves nothing pending.
      expect(await a.mount?.stop()).toMatchObject({ pending: 0 });
      // Started again, it refuses rather than recreating the workspace, and says why.
      await expect(w.mount(a, { workspace: ws })).rejects.toMatchObject({
        code: "NOT_FOUND",
        message: expect.stringMatching(/was deleted.*afs unmount/),
      });
      await expect(a.afs.workspaces.get(ws)).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("a folder removed remotely keeps its ignored files here, without an error loop", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(join(a.dir, "pkg/sub"), { recursive: true });
      await writeFile(join(a.dir, ".gitignore"), "*.log\nout/\n");
      await writeFile(join(a.dir, "pkg/src.ts"), "src");
      await writeFile(join(a.dir, "pkg/sub/lib.ts"), "lib");
      await w.mount(a, { workspace: ws, ...MANUAL });
      await w.mount(b, { workspace: ws, ...MANUAL });
      // Build outputs on a only.
      await writeFile(join(a.dir, "pkg/build.log"), "log");
      await mkdir(join(a.dir, "pkg/sub/out"));
      await writeFile(join(a.dir, "pkg/sub/out/lib.js"), "built");
      await a.mount?.flush();
      const revision = (await a.afs.workspaces.get(ws)).revision;

      await rm(join(b.dir, "pkg"), { recursive: true });
      await settle(b, a, b, a);
      expect(await tree(a.dir)).toEqual({
        ".gitignore": "*.log\nout/\n",
        pkg: "dir",
        "pkg/build.log": "log",
        "pkg/sub": "dir",
        "pkg/sub/out": "dir",
        "pkg/sub/out/lib.js": "built",
      });
      // The folder is not uploaded again (it holds nothing that syncs), and nothing waits.
      const vol = await a.afs.workspaces.volume(ws);
      expect(await vol.stat("/pkg")).toBeNull();
      expect(await tree(b.dir)).toEqual({ ".gitignore": "*.log\nout/\n" });
      expect(a.mount?.status()).toMatchObject({ pending: 0, lastError: null, conflicts: 0 });
      // Only b's removal was committed since: a uploaded nothing back.
      const since = await a.afs.events.list(ws, { after: revision });
      expect(since.events.length).toBeGreaterThan(0);
      expect(since.events.filter((e) => e.actor !== "b")).toEqual([]);
      // Later work in the folder syncs as usual.
      await writeFile(join(a.dir, "pkg/new.ts"), "new");
      await settle(a, b);
      expect((await tree(b.dir))["pkg/new.ts"]).toBe("new");
      expect((await tree(b.dir))["pkg/build.log"]).toBeUndefined();
    });

    for (const prefer of ["local", "remote"] as const) {
      it(`first mount with prefer ${prefer}: a directory on one side and a file on the other keep both`, async () => {
        const w = fresh();
        const a = await w.machine("a");
        const b = await w.machine("b");
        const ws = w.workspace();
        // The workspace: x a directory, y a file.
        await mkdir(join(a.dir, "x/deep"), { recursive: true });
        await writeFile(join(a.dir, "x/deep/r.txt"), "remote x");
        await writeFile(join(a.dir, "y"), "remote y");
        await w.mount(a, { workspace: ws, ...MANUAL });
        // The directory: x a file, y a directory.
        await mkdir(join(b.dir, "y/deep"), { recursive: true });
        await writeFile(join(b.dir, "y/deep/l.txt"), "local y");
        await writeFile(join(b.dir, "x"), "local x");
        await w.mount(b, { workspace: ws, prefer, ...MANUAL });
        await settle(b, a, b);
        const t = await tree(b.dir);
        expect(await tree(a.dir)).toEqual(t);
        const copy = (name: string): string => {
          const found = Object.keys(t).filter((p) => p.startsWith(`${name}.conflict-h-`) && !p.includes("/"));
          expect(found, `${name}'s conflict copy`).toHaveLength(1);
          return found[0] as string;
        };
        const x = copy("x");
        const y = copy("y");
        // The preferred side at each path, the other beside it.
        if (prefer === "local") {
          expect(t).toMatchObject({ x: "local x", [`${x}/deep/r.txt`]: "remote x" });
        } else {
          expect(t).toMatchObject({ "x/deep/r.txt": "remote x", [x]: "local x" });
        }
        if (prefer === "remote") {
          expect(t).toMatchObject({ y: "remote y", [`${y}/deep/l.txt`]: "local y" });
        } else {
          expect(t).toMatchObject({ "y/deep/l.txt": "local y", [y]: "remote y" });
        }
        expect(b.mount?.status()).toMatchObject({ pending: 0, conflicts: 2, lastError: null });
      });
    }

    it("a directory swapped for a symlink to outside, over and over while its files change, uploads nothing from outside", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const canary = await tempDir("afs-canary-");
      try {
        const ws = w.workspace();
        const names = Array.from({ length: 8 }, (_, i) => `f${i}.txt`);
        await mkdir(join(a.dir, "d"), { recursive: true });
        for (const n of names) {
          await writeFile(join(a.dir, "d", n), `local ${n}`);
          await writeFile(join(canary.dir, n), `TOP SECRET ${n}`);
        }
        await w.mount(a, { workspace: ws, debounceMs: 1 });
        const secrets = new Set(names.map((n) => createHash("sha256").update(`TOP SECRET ${n}`).digest("hex")));
        // Another process flips a's d/ back and forth between a real directory whose files keep
        // changing (so each round reads them) and a link to the canary holding files of the same
        // names, as fast as it can for two seconds: the sync's checks and reads race it.
        const real = join(a.dir, "d");
        const flipper = `
          const fs = require("node:fs");
          const [real, aside, canary] = process.argv.slice(1);
          const until = Date.now() + 2000;
          for (let i = 0; Date.now() < until; i++) {
            try {
              for (const n of ["f0.txt", "f1.txt", "f2.txt"]) fs.writeFileSync(real + "/" + n, "local " + n + " " + i);
              fs.renameSync(real, aside);
              fs.symlinkSync(canary, real);
              for (const end = Date.now() + (i % 3); Date.now() < end; );
              fs.unlinkSync(real);
              fs.renameSync(aside, real);
            } catch {}
          }`;
        await new Promise<void>((done, fail) => {
          const child = spawn(process.execPath, ["-e", flipper, real, join(a.dir, "..", "d-aside"), canary.dir], {
            stdio: "inherit",
          });
          child.on("error", fail);
          child.on("exit", () => done());
        });
        expect((await lstat(real)).isDirectory()).toBe(true);
        await settle(a, a);
        const uploaded: string[] = [];
        for (let after = 0; ; ) {
          const page = await a.afs.events.list(ws, { after, limit: 1000 });
          for (const e of page.events) if (e.newHash) uploaded.push(e.newHash);
          if (!page.more) break;
          after = page.next;
        }
        expect(uploaded.length).toBeGreaterThan(names.length);
        expect(uploaded.filter((h) => secrets.has(h))).toEqual([]);
        const vol = await a.afs.workspaces.volume(ws);
        for await (const s of vol.walk("/")) {
          if (s.kind === "file") expect((await vol.readFile(s.path)).toString(), s.path).not.toContain("TOP SECRET");
        }
      } finally {
        await canary.cleanup();
      }
    });

    it("a directory swapped for a symlink to outside, over and over while remote writes land in it, writes nothing outside", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const canary = await tempDir("afs-canary-");
      try {
        const ws = w.workspace();
        await mkdir(join(a.dir, "d"), { recursive: true });
        await writeFile(join(a.dir, "d/f.txt"), "f");
        await w.mount(a, { workspace: ws });
        await w.mount(b, { workspace: ws });
        const vol = await a.afs.workspaces.volume(ws);
        let writing = true;
        const writes = (async () => {
          for (let i = 0; writing; i++) {
            await write(vol, { path: `/d/s${i % 4}/f${i}.txt`, content: `remote ${i}` });
            await sleep(3);
          }
        })();
        // b's d/ goes back and forth between a real directory and a link to the canary.
        const real = join(b.dir, "d");
        const aside = join(b.dir, "..", "d-aside");
        for (let i = 0; i < 60; i++) {
          await rename(real, aside).catch(() => {});
          await symlink(canary.dir, real).catch(() => {});
          await sleep(i % 7);
          await rm(real, { force: true }).catch(() => {});
          await rename(aside, real).catch(() => {});
          await sleep(i % 5);
        }
        writing = false;
        await writes;
        expect(await everything(canary.dir)).toEqual([]);
        await settle(b, a, b, a);
        expect(await everything(canary.dir)).toEqual([]);
        expect((await lstat(real)).isDirectory()).toBe(true);
        // Both sides agree once settled (moving d/ out of the mount was b's deletion of its files).
        await until(async () => {
          await settle(b, a);
          return JSON.stringify(await tree(b.dir)) === JSON.stringify(await tree(a.dir));
        }, "both directories to agree");
        expect(Object.keys(await tree(b.dir)).filter((p) => p.startsWith("d/s")).length).toBeGreaterThan(0);
      } finally {
        await canary.cleanup();
      }
    });
  });
}
