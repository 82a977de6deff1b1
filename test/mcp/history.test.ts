// The history tools over stdio on each tested store, under the reference's names: versions with
// who and through which surface, a version read and diffed, restore, undelete, the activity log's
// cursor, and the versioning policy; with the annotations a host relies on.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, type Session, storeHomes } from "./session.js";

const sha = (s: string): string => createHash("sha256").update(s).digest("hex");

interface Version {
  version_id: string | null;
  op: string;
  actor: string | null;
  surface: string | null;
  checkpoints: string[];
  sha256: string | null;
}

describe.each(testStores())("history tools on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let s: Session;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    await h.afs.workspaces.create("demo");
    s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "demo"]);
  });
  afterAll(() => h?.cleanup());

  it("annotates reads as read-only and restore and undelete as destructive", () => {
    const hint = (name: string) => s.tools.find((t) => t.name === name)?.annotations;
    for (const name of ["file_history", "file_read_version", "file_diff_versions", "workspace_activity"]) {
      expect(hint(name), name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
    for (const name of ["file_restore_version", "file_undelete", "workspace_set_versioning_policy"]) {
      expect(hint(name), name).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    }
  });

  it("lists versions made through MCP and the CLI engine, reads, diffs, restores and undeletes", async () => {
    await s.ok("file_write", { path: "/plan.md", content: "step one\n" });
    await s.ok("checkpoint_create", { checkpoint: "v1" });
    // The same workspace changed by another surface: the engine the test holds (surface "engine").
    await (await h.afs.workspaces.volume("demo")).writeFile("/plan.md", Buffer.from("step two\n"), { op: "write" });

    const history = await s.ok<{ versions: Version[]; next_cursor: string | null }>("file_history", {
      path: "/plan.md",
    });
    expect(history.versions.map((v) => [v.op, v.actor, v.surface, v.checkpoints])).toEqual([
      ["write", "seed", "engine", []],
      ["write", "tester", "mcp", ["v1"]],
    ]);
    expect(history.next_cursor).toBeNull();
    const first = history.versions[1]?.version_id as string;
    expect(first).toBe(sha("step one\n").slice(0, 12));

    expect(await s.ok("file_read_version", { path: "/plan.md", version: first })).toMatchObject({
      content: "step one\n",
      sha256: sha("step one\n"),
    });
    expect(await s.ok("file_read_version", { path: "/plan.md", version: "v1" })).toMatchObject({
      content: "step one\n",
    });
    const diff = await s.ok<{ patch: string; to: string }>("file_diff_versions", { path: "/plan.md", from: "v1" });
    expect(diff.to).toBe("live");
    expect(diff.patch).toContain("-step one\n+step two\n");
    expect((await s.fail("file_read_version", { path: "/plan.md", version: "0000" })).code).toBe("NOT_FOUND");

    expect(await s.ok("file_restore_version", { path: "/plan.md", version: first })).toMatchObject({
      path: "/plan.md",
      kind: "file",
      sha256: sha("step one\n"),
    });
    await s.ok("file_delete", { path: "/plan.md" });
    expect(await s.ok("file_undelete", { path: "/plan.md" })).toMatchObject({ sha256: sha("step one\n") });
    expect((await s.fail("file_undelete", { path: "/plan.md" })).code).toBe("ALREADY_EXISTS");
    const latest = await s.ok<{ versions: Version[] }>("file_history", { path: "/plan.md", limit: 3 });
    expect(latest.versions.map((v) => [v.op, v.surface])).toEqual([
      ["undelete", "mcp"],
      ["delete", "mcp"],
      ["restore_version", "mcp"],
    ]);
  });

  it("pages the activity log forward from a cursor", async () => {
    const now = await s.ok<{ events: { op: string; surface: string }[]; next_cursor: string }>("workspace_activity", {
      limit: 2,
    });
    expect(now.events.map((e) => e.op)).toEqual(["delete", "undelete"]);
    await s.ok("file_write", { path: "/later.txt", content: "later" });
    const since = await s.ok<{ events: { op: string; path: string; actor: string }[]; more: boolean }>(
      "workspace_activity",
      { cursor: now.next_cursor },
    );
    expect(since.events.map((e) => [e.op, e.path, e.actor])).toEqual([["write", "/later.txt", "tester"]]);
    expect(since.more).toBe(false);
    const mine = await s.ok<{ events: unknown[] }>("workspace_activity", { actor: "seed" });
    expect(mine.events).toHaveLength(1);
  });

  it("gets and sets the versioning policy", async () => {
    expect(await s.ok("workspace_get_versioning_policy", {})).toEqual({
      workspace: "demo",
      enabled: true,
      keep_days: 7,
      keep_versions: 0,
    });
    expect(await s.ok("workspace_set_versioning_policy", { keep_days: 2, keep_versions: 10 })).toMatchObject({
      keep_days: 2,
      keep_versions: 10,
    });
    expect(await h.afs.history.policy("demo")).toEqual({ enabled: true, keepDays: 2, keepVersions: 10 });
    expect(await s.ok("workspace_set_versioning_policy", { enabled: false })).toMatchObject({ enabled: false });
  });
});
