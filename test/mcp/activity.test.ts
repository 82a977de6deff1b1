// workspace_activity as the console's activity pages use it, over stdio on each tested store: what
// each change did (outcome), filters by surface and outcome, and the newest changes of every
// workspace merged in time order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, type Session, storeHomes } from "./session.js";

interface Activity {
  workspace: string | null;
  events: { workspace: string; op: string; path: string; actor: string; surface: string; outcome: string }[];
  next_cursor: string;
}

describe.each(testStores())("workspace_activity on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let s: Session;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    await h.afs.workspaces.create("a");
    await h.afs.workspaces.create("b");
    // Made by the engine the test holds (surface "engine"), then through MCP (surface "mcp").
    await (await h.afs.workspaces.volume("a")).writeFile("/seed.txt", Buffer.from("seed\n"), { op: "write" });
    s = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "a"]);
    await s.ok("file_write", { path: "/x.txt", content: "one\n" });
    await s.ok("file_write", { path: "/x.txt", content: "two\n" });
    await s.ok("file_rename", { path: "/x.txt", new_path: "/y.txt" });
    await s.ok("file_delete", { path: "/y.txt" });
    await s.ok("checkpoint_create", { checkpoint: "v1" });
    await s.ok("file_write", { workspace: "b", path: "/b.txt", content: "b\n" });
  });
  afterAll(() => h?.cleanup());

  it("says what each change did", async () => {
    const all = await s.ok<Activity>("workspace_activity", {});
    expect(all.events.map((e) => [e.op, e.path, e.outcome])).toEqual([
      ["write", "/seed.txt", "created"],
      ["write", "/x.txt", "created"],
      ["write", "/x.txt", "modified"],
      ["rename", "/x.txt", "renamed"],
      ["rename", "/y.txt", "renamed"],
      ["delete", "/y.txt", "deleted"],
      ["checkpoint", "/", "checkpoint"],
    ]);
    expect(all.events.every((e) => e.workspace === "a")).toBe(true);
  });

  it("filters by outcome and by surface", async () => {
    const deleted = await s.ok<Activity>("workspace_activity", { outcome: "deleted" });
    expect(deleted.events.map((e) => e.path)).toEqual(["/y.txt"]);
    const engine = await s.ok<Activity>("workspace_activity", { surface: "engine" });
    expect(engine.events.map((e) => [e.path, e.actor])).toEqual([["/seed.txt", "seed"]]);
    const mcpCreated = await s.ok<Activity>("workspace_activity", { surface: "mcp", outcome: "created" });
    expect(mcpCreated.events.map((e) => e.path)).toEqual(["/x.txt"]);
    // The cursor form filters the same way.
    const paged = await s.ok<Activity>("workspace_activity", { cursor: "0", outcome: "renamed" });
    expect(paged.events.map((e) => e.path)).toEqual(["/x.txt", "/y.txt"]);
    const bad = await s.fail("workspace_activity", { outcome: "exploded" });
    expect(bad.code).toBe("INVALID_ARGUMENT");
  });

  it("merges every workspace's newest changes in time order with every_workspace", async () => {
    const every = await s.ok<Activity>("workspace_activity", { every_workspace: true });
    expect(every.workspace).toBeNull();
    expect(every.next_cursor).toBe("");
    expect(every.events.map((e) => `${e.workspace}:${e.path}`)).toEqual([
      "a:/seed.txt",
      "a:/x.txt",
      "a:/x.txt",
      "a:/x.txt",
      "a:/y.txt",
      "a:/y.txt",
      "a:/",
      "b:/b.txt",
    ]);
    const limited = await s.ok<Activity>("workspace_activity", { every_workspace: true, limit: 2 });
    expect(limited.events.map((e) => `${e.workspace}:${e.path}`)).toEqual(["a:/", "b:/b.txt"]);
    const filtered = await s.ok<Activity>("workspace_activity", { every_workspace: true, path: "/b.txt" });
    expect(filtered.events.map((e) => e.workspace)).toEqual(["b"]);
    const both = await s.fail("workspace_activity", { every_workspace: true, workspace: "a" });
    expect(both).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(both.message).toContain("every_workspace takes neither workspace nor cursor");
  });
});
