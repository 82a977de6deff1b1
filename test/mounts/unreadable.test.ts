// A file or a directory the sync cannot read (chmod 000) is reported in the mount's last error and
// tried again, while everything else keeps syncing; once readable it syncs. Permissions bind only
// a process that is not root: as root, this file's worker runs as nobody (its effective ids), and
// everything the test creates is created as nobody.
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tree, until, worldsOn } from "./helpers.js";

const NOBODY = 65534;
const asRoot = process.platform !== "win32" && process.getuid?.() === 0;

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName) && process.platform !== "win32")(`unreadable paths on ${storeName}`, () => {
    const fresh = worldsOn(storeName);
    beforeAll(() => {
      if (!asRoot) return;
      process.setegid?.(NOBODY);
      process.seteuid?.(NOBODY);
    });
    afterAll(() => {
      if (!asRoot) return;
      process.seteuid?.(0);
      process.setegid?.(0);
    });

    it("are reported and retried, never a crash, and sync once readable", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws });
      // Readable again whatever happens, so the directories can be removed afterwards.
      w.defer(async () => {
        await chmod(join(a.dir, "secret.txt"), 0o644).catch(() => {});
        await chmod(join(a.dir, "locked"), 0o755).catch(() => {});
      });
      await writeFile(join(a.dir, "secret.txt"), "secret");
      await chmod(join(a.dir, "secret.txt"), 0);
      await mkdir(join(a.dir, "locked"));
      await writeFile(join(a.dir, "locked/inside.txt"), "inside");
      await chmod(join(a.dir, "locked"), 0);
      await writeFile(join(a.dir, "ok.txt"), "ok");
      // The rest syncs; the unreadable paths are named in the last error, and wait.
      await until(async () => (await tree(b.dir))["ok.txt"] === "ok", "the readable file on b");
      await until(() => /secret\.txt|locked/.test(a.mount?.status().lastError ?? ""), "the error reported");
      expect(a.mount?.status().lastError).toMatch(/permission denied|EACCES/i);
      expect(a.mount?.status().pending).toBeGreaterThan(0);
      expect(a.mount?.status().state).not.toBe("stopped");
      await writeFile(join(a.dir, "later.txt"), "later");
      await until(async () => (await tree(b.dir))["later.txt"] === "later", "a later file on b");
      const t = await tree(b.dir);
      expect(t["secret.txt"]).toBeUndefined();
      expect(t["locked/inside.txt"]).toBeUndefined();

      await chmod(join(a.dir, "secret.txt"), 0o644);
      await chmod(join(a.dir, "locked"), 0o755);
      await until(async () => {
        const t = await tree(b.dir);
        return t["secret.txt"] === "secret" && t["locked/inside.txt"] === "inside";
      }, "the files on b once readable");
      await until(() => a.mount?.status().pending === 0, "nothing pending on a");
      // Settled: the error is over, and no longer shown.
      await until(() => a.mount?.status().lastError === null, "the error cleared");
      expect(a.mount?.status().state).toBe("running");
      expect(await tree(b.dir)).toEqual(await tree(a.dir));
    });
  });
}
