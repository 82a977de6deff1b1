// The read tools at a checkpoint and file_list's pages, through the real `afs mcp`: a checkpoint
// reads as it was when made, refuses writes, and a listing of any size comes a page at a time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, type Home, home, type Session } from "./session.js";

interface Listed {
  path: string;
  items: { path: string; kind: string }[];
  truncated: boolean;
  cursor?: string;
}

describe("file tools at a checkpoint, and paged listings", () => {
  let h: Home;
  let s: Session;
  beforeAll(async () => {
    ensureBuilt();
    h = await home();
    await h.afs.workspaces.create("demo");
    const v = await h.afs.workspaces.volume("demo");
    await v.writeFile("/a.txt", Buffer.from("one\ntwo\n"), { op: "write" });
    await v.writeFile("/dir/b.txt", Buffer.from("bee\n"), { op: "write" });
    await h.afs.checkpoints.create("demo", { name: "cp1" });
    await v.writeFile("/a.txt", Buffer.from("ONE\nTWO\nTHREE\n"), { op: "write" });
    await v.writeFile("/new.txt", Buffer.from("new\n"), { op: "write" });
    for (let i = 0; i < 25; i++)
      await v.writeFile(`/many/f${String(i).padStart(2, "0")}.txt`, Buffer.from(`${i}`), { op: "write" });
    await v.mkdir("/many/sub");
    s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "demo"]);
  }, 60_000);
  afterAll(() => h?.cleanup());

  it("file_read, file_lines, file_list, file_glob and file_grep read a checkpoint as it was", async () => {
    expect(await s.ok("file_read", { path: "/a.txt", checkpoint: "cp1" })).toMatchObject({ content: "one\ntwo\n" });
    expect(await s.ok("file_read", { path: "/a.txt" })).toMatchObject({ content: "ONE\nTWO\nTHREE\n" });
    expect(await s.ok("file_lines", { path: "/a.txt", start: 2, checkpoint: "cp1" })).toMatchObject({
      content: "two\n",
      total_lines: 2,
    });
    const at = await s.ok<Listed>("file_list", { path: "/", checkpoint: "cp1" });
    expect(at.items.map((i) => i.path)).toEqual(["/dir", "/a.txt"]);
    const glob = await s.ok<{ items: { path: string }[] }>("file_glob", { pattern: "*.txt", checkpoint: "cp1" });
    expect(glob.items.map((i) => i.path).sort()).toEqual(["/a.txt", "/dir/b.txt"]);
    const grep = await s.ok<{ matches: { path: string }[] }>("file_grep", { pattern: "bee", checkpoint: "cp1" });
    expect(grep.matches.map((m) => m.path)).toEqual(["/dir/b.txt"]);
    expect((await s.fail("file_read", { path: "/new.txt", checkpoint: "cp1" })).code).toBe("NOT_FOUND");
    expect((await s.fail("file_read", { path: "/a.txt", checkpoint: "nope" })).code).toBe("NOT_FOUND");
  });

  it("offers no checkpoint to the write tools", async () => {
    const r = await s.fail("file_write", { path: "/a.txt", content: "x", checkpoint: "cp1" });
    expect(r.code).toBe("INVALID_ARGUMENT");
    expect(await s.ok("file_read", { path: "/a.txt", checkpoint: "cp1" })).toMatchObject({ content: "one\ntwo\n" });
  });

  it("pages a directory with limit and cursor, directories first, each entry once", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page: Listed = await s.ok<Listed>("file_list", { path: "/many", limit: 10, ...(cursor ? { cursor } : {}) });
      expect(page.truncated).toBe(page.cursor !== undefined);
      seen.push(...page.items.map((i) => i.path));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([
      "/many/sub",
      ...Array.from({ length: 25 }, (_, i) => `/many/f${String(i).padStart(2, "0")}.txt`),
    ]);
  });

  it("goes on after an entry that was deleted between pages, and refuses a cursor of another listing", async () => {
    const first = await s.ok<Listed>("file_list", { path: "/many", limit: 3 });
    expect(first.items.map((i) => i.path)).toEqual(["/many/sub", "/many/f00.txt", "/many/f01.txt"]);
    await s.ok("file_delete", { path: "/many/f01.txt" });
    const next = await s.ok<Listed>("file_list", { path: "/many", limit: 2, cursor: first.cursor });
    expect(next.items.map((i) => i.path)).toEqual(["/many/f02.txt", "/many/f03.txt"]);
    expect((await s.fail("file_list", { path: "/", cursor: first.cursor })).code).toBe("INVALID_ARGUMENT");
    expect((await s.fail("file_list", { path: "/many", cursor: "junk" })).code).toBe("INVALID_ARGUMENT");
  });

  it("pages a deeper listing in its depth-first order", async () => {
    const whole = await s.ok<Listed>("file_list", { path: "/", depth: 3 });
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page: Listed = await s.ok<Listed>("file_list", {
        path: "/",
        depth: 3,
        limit: 4,
        ...(cursor ? { cursor } : {}),
      });
      paged.push(...page.items.map((i) => i.path));
      cursor = page.cursor;
    } while (cursor);
    expect(paged).toEqual(whole.items.map((i) => i.path));
  });

  it("workspace_list tells each workspace's last event and this machine's mounts", async () => {
    await s.ok("file_write", { path: "/last.txt", content: "x" });
    const r = await s.ok<{
      machine: string;
      workspaces: { name: string; last_event: { op: string; path: string; actor: string } | null; mounts: unknown[] }[];
    }>("workspace_list");
    expect(r.machine.length).toBeGreaterThan(0);
    expect(r.workspaces[0]).toMatchObject({
      name: "demo",
      last_event: { op: "write", path: "/last.txt", actor: "tester" },
      mounts: [],
    });
  });

  it("workspace_fork starts from a checkpoint when given one", async () => {
    const r = await s.ok("workspace_fork", { workspace: "demo", new_workspace: "then", checkpoint: "cp1" });
    expect(r).toMatchObject({ workspace: "then", source: "demo", dirty: false });
    expect(await s.ok("file_read", { workspace: "then", path: "/a.txt" })).toMatchObject({ content: "one\ntwo\n" });
    expect((await s.fail("file_read", { workspace: "then", path: "/new.txt" })).code).toBe("NOT_FOUND");
    const missing = await s.fail("workspace_fork", { workspace: "demo", new_workspace: "x", checkpoint: "nope" });
    expect(missing.code).toBe("NOT_FOUND");
  });
});
