// checkpoint_diff in pages and from the live state, and checkpoint_list's change counts, over
// stdio MCP: what the console's timeline, diff page and restore preview read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, type Home, home, type Session } from "./session.js";

interface Diff {
  base: string;
  target: string;
  summary: { added: number; modified: number; deleted: number; renamed: number };
  total: number;
  changes: { status: string; path: string; patch?: string }[];
  truncated: boolean;
  next_offset: number | null;
}

describe("checkpoint_diff pages and checkpoint_list counts", () => {
  let h: Home;
  let s: Session;
  beforeAll(async () => {
    ensureBuilt();
    h = await home();
    await h.afs.workspaces.create("demo");
    s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "demo"]);
    for (let i = 0; i < 25; i++) {
      await s.ok("file_write", { path: `/f${String(i).padStart(2, "0")}.txt`, content: `one ${i}\n` });
    }
    await s.ok("checkpoint_create", { checkpoint: "v1", description: "first" });
    for (let i = 0; i < 25; i++) {
      await s.ok("file_write", { path: `/f${String(i).padStart(2, "0")}.txt`, content: `two ${i}\n` });
    }
    await s.ok("file_write", { path: "/new.txt", content: "new\n" });
    await s.ok("checkpoint_create", { checkpoint: "v2" });
  });
  afterAll(() => h?.cleanup());

  it("pages a long diff: the summary counts all, each page carries its own hunks", async () => {
    const first = await s.ok<Diff>("checkpoint_diff", { base: "v1", target: "v2", limit: 10 });
    expect(first.summary).toEqual({ added: 1, modified: 25, deleted: 0, renamed: 0 });
    expect(first.total).toBe(26);
    expect(first.changes.map((c) => c.path)).toEqual(
      Array.from({ length: 10 }, (_, i) => `/f${String(i).padStart(2, "0")}.txt`),
    );
    expect(first.changes[3]?.patch).toContain("-one 3\n+two 3");
    expect(first).toMatchObject({ truncated: true, next_offset: 10 });

    const seen: string[] = first.changes.map((c) => c.path);
    let offset = first.next_offset;
    while (offset !== null) {
      const page: Diff = await s.ok<Diff>("checkpoint_diff", { base: "v1", target: "v2", limit: 10, offset });
      seen.push(...page.changes.map((c) => c.path));
      offset = page.next_offset;
    }
    expect(seen).toHaveLength(26);
    expect(new Set(seen).size).toBe(26);
    expect(seen.at(-1)).toBe("/new.txt");

    const whole = await s.ok<Diff>("checkpoint_diff", { base: "v1", target: "v2" });
    expect(whole).toMatchObject({ total: 26, truncated: false, next_offset: null });
    expect(whole.changes).toHaveLength(26);
  });

  it("diffs from the live state to a checkpoint: what restoring it would change", async () => {
    await s.ok("file_write", { path: "/live.txt", content: "live only\n" });
    const preview = await s.ok<Diff>("checkpoint_diff", { target: "v1" });
    expect(preview).toMatchObject({ base: "live", target: "v1" });
    expect(preview.summary).toEqual({ added: 0, modified: 25, deleted: 2, renamed: 0 });
    expect(preview.changes.find((c) => c.path === "/f00.txt")?.patch).toContain("-two 0\n+one 0");
    expect(preview.changes.filter((c) => c.status === "deleted").map((c) => c.path)).toEqual(["/live.txt", "/new.txt"]);
    // Added and deleted text files carry their lines against an empty side, as git shows them.
    expect(preview.changes.find((c) => c.path === "/live.txt")?.patch).toBe(
      "--- a/live.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-live only\n",
    );
    const forward = await s.ok<Diff>("checkpoint_diff", { base: "v1" });
    expect(forward.changes.find((c) => c.path === "/live.txt")?.patch).toBe(
      "--- /dev/null\n+++ b/live.txt\n@@ -0,0 +1,1 @@\n+live only\n",
    );
    const both = await s.fail("checkpoint_diff", {});
    expect(both.code).toBe("INVALID_ARGUMENT");
  });

  it("counts each checkpoint's changes against its parent when asked", async () => {
    const plain = await s.ok<{ checkpoints: { name: string; changes?: number }[] }>("checkpoint_list", {});
    expect(plain.checkpoints.every((c) => c.changes === undefined)).toBe(true);
    const listed = await s.ok<{ checkpoints: { name: string; parent: string | null; changes?: number }[] }>(
      "checkpoint_list",
      { count_changes: true },
    );
    const by = new Map(listed.checkpoints.map((c) => [c.name, c]));
    expect(by.get("v2")).toMatchObject({ parent: "v1", changes: 26 });
    expect(by.get("v1")?.changes).toBe(25);
  });
});
