// The profile × tool matrix over stdio: each profile lists exactly its tools, they work, and every
// other tool is refused with PERMISSION_DENIED; on each tested store. The expected sets are written
// out here on purpose.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, storeHomes } from "./session.js";

const FILE_READS = [
  "file_read",
  "file_lines",
  "file_list",
  "file_glob",
  "file_grep",
  "file_query",
  "file_history",
  "file_read_version",
  "file_diff_versions",
  "workspace_activity",
];
const FILE_WRITES = [
  "file_restore_version",
  "file_undelete",
  "file_write",
  "file_create_exclusive",
  "file_replace",
  "file_insert",
  "file_delete_lines",
  "file_patch",
  "file_rename",
  "file_delete",
];
const CHECKPOINTS = ["checkpoint_list", "checkpoint_diff", "checkpoint_create", "checkpoint_restore"];
const ADMIN = [
  "afs_status",
  "workspace_list",
  "workspace_create",
  "workspace_fork",
  "workspace_get_versioning_policy",
  "workspace_set_versioning_policy",
];

const EXPECTED: Record<string, string[]> = {
  "workspace-ro": FILE_READS,
  "workspace-rw": [...FILE_READS, ...FILE_WRITES],
  "workspace-rw-checkpoint": [...FILE_READS, ...FILE_WRITES, ...CHECKPOINTS],
  "admin-ro": ["afs_status", "workspace_list", "workspace_get_versioning_policy", ...FILE_READS, "checkpoint_list"],
  "admin-rw": [...ADMIN, ...CHECKPOINTS, ...FILE_READS, ...FILE_WRITES],
};

/** Valid arguments for each tool, in an order where each call still finds what it needs. */
const calls = (tag: string): [string, Record<string, unknown>][] => [
  ["afs_status", {}],
  ["workspace_list", {}],
  ["file_read", { path: "/a.txt" }],
  ["file_lines", { path: "/a.txt", start: 1, end: 2 }],
  ["file_list", { path: "/" }],
  ["file_glob", { pattern: "*.txt" }],
  ["file_grep", { pattern: "two" }],
  ["file_query", { query: "three" }],
  ["file_history", { path: "/a.txt" }],
  ["file_read_version", { path: "/a.txt", version: "base" }],
  ["file_diff_versions", { path: "/a.txt", from: "base" }],
  ["workspace_activity", { limit: 5 }],
  ["file_write", { path: "/w.txt", content: "w\n" }],
  ["file_create_exclusive", { path: "/excl.txt", content: "x" }],
  ["file_replace", { path: "/a.txt", old: "two", new: "TWO" }],
  ["file_insert", { path: "/a.txt", line: -1, content: "four" }],
  ["file_delete_lines", { path: "/a.txt", start: 1, end: 1 }],
  ["file_patch", { path: "/a.txt", patches: [{ op: "insert", start_line: 0, new: "zero" }] }],
  ["file_rename", { path: "/mv.txt", new_path: "/moved.txt" }],
  ["file_delete", { path: "/del.txt" }],
  ["file_undelete", { path: "/del.txt" }],
  ["file_restore_version", { path: "/a.txt", version: "base" }],
  ["checkpoint_list", {}],
  ["checkpoint_diff", { base: "base" }],
  ["checkpoint_create", { checkpoint: "after" }],
  ["checkpoint_restore", { checkpoint: "base" }],
  ["workspace_create", { workspace: `new-${tag}` }],
  ["workspace_fork", { workspace: `ws-${tag}`, new_workspace: `fork-${tag}` }],
  ["workspace_get_versioning_policy", {}],
  ["workspace_set_versioning_policy", { keep_days: 3 }],
];

describe.each(testStores())("on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    for (const profile of Object.keys(EXPECTED)) {
      const ws = `ws-${profile}`;
      await h.afs.workspaces.create(ws);
      const volume = await h.afs.workspaces.volume(ws);
      for (const [path, content] of [
        ["/a.txt", "one\ntwo\nthree\n"],
        ["/mv.txt", "move me\n"],
        ["/del.txt", "delete me\n"],
      ]) {
        await write(volume, { path: path as string, content: content as string });
      }
      await h.afs.checkpoints.create(ws, { name: "base" });
    }
  });
  afterAll(() => h?.cleanup());

  describe("profile × tool matrix over stdio", () => {
    it("covers every stdio tool", async () => {
      const s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "ws-admin-rw"]);
      expect(
        calls("x")
          .map(([name]) => name)
          .sort(),
      ).toEqual(s.tools.map((t) => t.name).sort());
      await s.close();
    });

    for (const [profile, expected] of Object.entries(EXPECTED)) {
      it(`${profile}: lists and runs its tools, refuses the rest`, async () => {
        const s = await h.connect(["mcp", "--profile", profile, "--workspace", `ws-${profile}`]);
        expect(s.tools.map((t) => t.name).sort()).toEqual([...expected].sort());
        for (const [name, args] of calls(profile)) {
          const r = await s.call(name, args);
          if (expected.includes(name)) {
            expect(r.isError, `${profile} ${name}: ${JSON.stringify(r.structuredContent)}`).toBeFalsy();
          } else {
            expect(r.isError, `${profile} ${name} should be refused`).toBe(true);
            expect(r.structuredContent).toMatchObject({ error: { code: "PERMISSION_DENIED" } });
          }
        }
        // A refused write left nothing behind.
        const wrote = await (await h.afs.workspaces.volume(`ws-${profile}`)).stat("/w.txt");
        expect(wrote !== null).toBe(expected.includes("file_write") && !expected.includes("checkpoint_restore"));
        await s.close();
      });
    }

    it("HTTP-only tools are unknown over stdio", async () => {
      const s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "ws-admin-rw"]);
      await expect(s.call("workspace_delete", { workspace: "ws-admin-rw" })).rejects.toThrow(/Unknown tool/);
      await expect(s.call("mcp_token_issue", { workspace: "ws-admin-rw" })).rejects.toThrow(/Unknown tool/);
      expect(await h.afs.workspaces.get("ws-admin-rw")).toMatchObject({ name: "ws-admin-rw" });
      await s.close();
    });
  });
});
