// The resource watch on every tested store, in process: a second engine on the same store stands
// for another process or machine. Which changes reach which URI: a file's writes, a delete of a
// directory above it, a checkpoint restore; never a write elsewhere, a checkpoint, or a closed watch.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveLimits } from "../../src/access/limits.js";
import { write } from "../../src/ops/index.js";
import { type ResourceContext, watchResources } from "../../src/protocols/mcp/resources/index.js";
import { Afs } from "../../src/workspace/afs.js";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, storeHomes } from "./session.js";

describe.each(testStores())("on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let writer: Afs;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    writer = await Afs.open({ home: h.home, store: h.store, actor: "elsewhere", env: {} });
    await h.afs.workspaces.create("demo");
    const v = await h.afs.workspaces.volume("demo");
    await write(v, { path: "/docs/a.md", content: "a\n" });
    await write(v, { path: "/b.txt", content: "b\n" });
    await h.afs.checkpoints.create("demo", { name: "base" });
  });
  afterAll(async () => {
    await writer?.close();
    await h?.cleanup();
  });

  const ctx = (): ResourceContext => ({
    afs: h.afs,
    profile: "workspace-ro",
    limits: resolveLimits(),
    workspace: "demo",
    pinned: true,
  });

  it("reports writes, directory deletes and restores to the URIs they touch, within a second", async () => {
    const updated: string[] = [];
    let listChanged = 0;
    const watch = await watchResources(
      ctx(),
      ["afs://demo/docs/a.md", "afs://demo/b.txt", "afs://demo@base/b.txt"],
      { onUpdated: (uri) => updated.push(uri), onListChanged: () => listChanged++ },
      { listChanged: true },
    );
    const other = await writer.workspaces.volume("demo");
    const started = Date.now();
    await write(other, { path: "/b.txt", content: "b2\n" });
    await expect.poll(() => updated, { timeout: 1000, interval: 5 }).toEqual(["afs://demo/b.txt"]);
    process.stderr.write(`resources (${store}): update seen ${Date.now() - started} ms after the write began\n`);
    expect(listChanged).toBe(0);

    // A write elsewhere and a checkpoint change no watched file; a new file changes the list.
    await write(other, { path: "/c.txt", content: "c\n" });
    await writer.checkpoints.create("demo", { name: "mid" });
    await expect.poll(() => listChanged, { timeout: 1000, interval: 5 }).toBe(1);
    expect(updated).toEqual(["afs://demo/b.txt"]);

    // Deleting the directory above a watched file is a change to that file.
    await other.remove("/docs", { recursive: true });
    await expect.poll(() => updated.at(-1), { timeout: 1000, interval: 5 }).toBe("afs://demo/docs/a.md");

    // Restoring a checkpoint changes every live file: both live URIs hear of it, the checkpoint's never.
    updated.length = 0;
    await writer.checkpoints.restore("demo", "base");
    await expect
      .poll(() => [...updated].sort(), { timeout: 1000, interval: 5 })
      .toEqual(["afs://demo/b.txt", "afs://demo/docs/a.md"]);

    watch.close();
    updated.length = 0;
    await write(other, { path: "/b.txt", content: "after close\n" });
    await new Promise((r) => setTimeout(r, 300));
    expect(updated).toEqual([]);
  });

  it("refuses to watch what the session may not read", async () => {
    const handlers = { onUpdated: () => undefined };
    await expect(watchResources(ctx(), ["afs://other/x.txt"], handlers)).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    await expect(watchResources(ctx(), ["afs://demo@nope/x.txt"], handlers)).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(watchResources(ctx(), ["afs://demo/../x"], handlers)).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
  });
});
