import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import type { SyncedPath } from "../core/mount-state.js";
import { SqliteMountStateStore } from "./mount-state-sqlite.js";

const file = (path: string, sha256 = "a".repeat(64)): SyncedPath => ({
  path,
  kind: "file",
  sha256,
  size: 1,
  mode: 0o644,
  disk: "1:1:1:1",
});

describe("SqliteMountStateStore", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const open = async () => {
    const d = await tempDir("afs-mounts-db-");
    cleanups.push(d.cleanup);
    return { path: `${d.dir}/mounts.db`, table: SqliteMountStateStore.open(`${d.dir}/mounts.db`) };
  };

  it("keeps the mount table and each mount's rows apart, across a reopen", async () => {
    const { path, table } = await open();
    await table.put({ id: "m1", workspace: "ws", dir: "/d1", readonly: false, createdAt: 1 });
    await table.put({ id: "m2", workspace: "ws", dir: "/d2", readonly: true, createdAt: 2 });
    await table.state("m1").apply({ put: [file("/a")], lastSeq: 7 });
    await table.state("m2").apply({ put: [file("/b")] });
    table.close();
    const again = SqliteMountStateStore.open(path);
    expect((await again.list()).map((m) => [m.id, m.readonly])).toEqual([
      ["m1", false],
      ["m2", true],
    ]);
    expect(await again.state("m1").lastSeq()).toBe(7);
    expect([...(await again.state("m1").get(["/a", "/b"])).keys()]).toEqual(["/a"]);
    expect(await again.remove("m1")).toBe(true);
    expect(await again.state("m1").under("/")).toEqual([]);
    expect((await again.state("m2").under("/")).map((r) => r.path)).toEqual(["/b"]);
    again.close();
  });

  it("under() is the path and its subtree only, and apply() touches only the rows it names", async () => {
    const { table } = await open();
    await table.put({ id: "m", workspace: "ws", dir: "/d", readonly: false, createdAt: 1 });
    const s = table.state("m");
    await s.apply({ put: ["/a", "/a/b", "/a/b/c", "/a-b", "/ab", "/b"].map((p) => file(p)) });
    expect((await s.under("/a")).map((r) => r.path).sort()).toEqual(["/a", "/a/b", "/a/b/c"]);
    expect((await s.under("/")).length).toBe(6);
    await s.apply({ put: [file("/a/b", "b".repeat(64))], remove: ["/a/b/c"] });
    expect((await s.get(["/a/b"])).get("/a/b")?.sha256).toBe("b".repeat(64));
    expect((await s.under("/a")).map((r) => r.path).sort()).toEqual(["/a", "/a/b"]);
    table.close();
  });
});
