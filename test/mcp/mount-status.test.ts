// afs_status over MCP lists this machine's mounts as `afs status` does: a running mount with its
// process, and nothing once it is unmounted. The mount's process is stopped (or killed) whatever happens.
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, type Home, home } from "./session.js";

interface Listing {
  workspace: string;
  dir: string;
  state: string;
  pid: number | null;
}

let h: Home;
let pid: number | null = null;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
});

afterAll(async () => {
  if (pid !== null) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  await h?.cleanup();
});

describe("afs_status", () => {
  it("shows the mounts with their state and process, beside its other fields", async () => {
    const dir = join(dirname(h.home), "mounted");
    mkdirSync(dir);
    writeFileSync(join(dir, "a.txt"), "a\n");
    const mounted = h.run(["mount", "m", dir, "--json"]);
    expect(mounted.stderr).toBe("");
    expect(mounted.status).toBe(0);
    pid = (JSON.parse(mounted.stdout) as Listing).pid;
    expect(pid).toBeGreaterThan(0);

    const s = await h.connect(["mcp", "--profile", "admin-rw"]);
    const status = await s.ok<{ home: string; mounts: Listing[] }>("afs_status");
    expect(status.home).toBe(h.home);
    expect(status.mounts).toMatchObject([{ workspace: "m", dir: realpathSync(dir), state: "running", pid }]);

    expect(h.run(["unmount", dir]).status).toBe(0);
    expect((await s.ok<{ mounts: Listing[] }>("afs_status")).mounts).toEqual([]);
  });
});
