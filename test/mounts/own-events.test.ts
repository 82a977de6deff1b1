// A mount's own uploads come back to it as events; it must pass them once and for all, or a later
// round (an unmount) finds them again and reconciles every path they touched (seconds on a big tree).
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { worldsOn } from "./helpers.js";

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`a mount's own events on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it("are passed for good once the mount is in step: the next round has nothing to do", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const ws = w.workspace();
      await mkdir(join(a.dir, "src"), { recursive: true });
      for (let i = 0; i < 50; i++) await writeFile(join(a.dir, "src", `f${i}.ts`), `export const v = ${i};\n`);
      const mount = await w.mount(a, { workspace: ws, debounceMs: 3_600_000 });
      const events = await a.afs.events.list(ws, { after: 0, limit: 1000 });
      expect(events.events.length).toBeGreaterThanOrEqual(50);
      // The sequence the mount has applied up to is persisted: past its own uploads.
      expect(await a.afs.mounts.state(mount.status().id).lastSeq()).toBe(events.next);
      const before = mount.status();
      await mount.flush();
      expect(mount.status().lastSync).toBe(before.lastSync);
    });
  });
}
