// A mount that stops stays stopped: a background round the watcher asked for while the last flush
// ran must not run after it, nor find the engine closed, call that an error and retry every second
// for good (what kept `afs acp --prompt` from exiting once a turn had ended: a CI run timed out).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { worldsOn } from "./helpers.js";

describe("stopping a mount", () => {
  const fresh = worldsOn("sqlite");

  it("runs no round after stop(), whenever the watcher's debounce fires, and the engine may close at once", async () => {
    const w = fresh();
    const mounts = [];
    // The debounce (20 ms) fires before, during and after the stop's flush, in 1 ms steps.
    for (let wait = 0; wait < 40; wait++) {
      const m = await w.machine(`s${wait}`);
      const mount = await w.mount(m, { workspace: w.workspace(), debounceMs: 20 });
      await writeFile(join(m.dir, "edit.txt"), `edit ${wait}`);
      await sleep(wait);
      const stopped = await mount.stop();
      await m.afs.close();
      expect(stopped.state).toBe("stopped");
      mounts.push(mount);
    }
    // A round left to run after the stop fails on the closed engine within a few ms.
    await sleep(100);
    expect(mounts.map((x) => x.status().state).filter((s) => s !== "stopped")).toEqual([]);
  });
});
