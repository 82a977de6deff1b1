// The sync process killed (SIGKILL) with changes on both sides meanwhile: started again on the same
// home, it reconciles them from its persisted per-path state, losing neither side's edit.
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { write } from "../../src/ops/write.js";
import { Afs } from "../../src/workspace/afs.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { REPO } from "../process/harness.js";
import { settle, tree, until, World } from "./helpers.js";

const SCRIPT = join(REPO, "test/mounts/mount-process.ts");

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`a killed mount on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;
    let world: World;
    afterEach(async () => {
      await world?.close();
    });

    it("reconciles both sides' changes made while it was down", async () => {
      world = new World((home) => (redis ? redis().url : `sqlite:${home}/afs.db`));
      const a = await world.machine("a");
      const b = await world.machine("b");
      const ws = world.workspace();
      const store = redis ? redis().url : `sqlite:${a.home}/afs.db`;
      await mkdir(a.dir, { recursive: true });
      for (const f of ["keep.txt", "local.txt", "remote.txt", "both.txt", "gone.txt"]) {
        await writeFile(join(a.dir, f), "base");
      }
      await world.mount(a, { workspace: ws });

      // b's sync runs in a process of its own, then is killed without a chance to stop.
      await b.afs.close();
      const child = spawn(process.execPath, ["--import", "tsx", SCRIPT, b.home, store, ws, b.dir], {
        cwd: REPO,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const exited = new Promise((resolve) => child.once("exit", resolve));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
          child.once("exit", (code) => reject(new Error(`the mount process exited (${code})`)));
        });
        await writeFile(join(b.dir, "seen.txt"), "running");
        await until(async () => (await tree(a.dir))["seen.txt"] === "running", "b's process to sync");
      } finally {
        child.kill("SIGKILL");
        await exited;
      }

      await writeFile(join(b.dir, "local.txt"), "b while down");
      await rm(join(b.dir, "gone.txt"));
      await writeFile(join(b.dir, "both.txt"), "b both");
      await write(await a.afs.workspaces.volume(ws), { path: "/remote.txt", content: "a while down" });
      await writeFile(join(a.dir, "both.txt"), "a both");
      await a.mount?.flush();

      b.afs = await Afs.open({ home: b.home, store, actor: "b" });
      await world.mount(b, { workspace: ws });
      await settle(b, a, b);
      const t = await tree(b.dir);
      expect(t).toEqual(await tree(a.dir));
      expect(t).toMatchObject({
        "keep.txt": "base",
        "local.txt": "b while down",
        "remote.txt": "a while down",
        "both.txt": "a both",
        "seen.txt": "running",
      });
      expect(t["gone.txt"]).toBeUndefined();
      const copies = (await readdir(b.dir)).filter((n) => n.startsWith("both.conflict-"));
      expect(copies).toHaveLength(1);
      expect(await readFile(join(b.dir, copies[0] as string), "utf8")).toBe("b both");
    });
  });
}
