// `afs cp …` end to end: create, list, show, diff (summary and patches), restore with its safety
// checkpoint, delete; plus gc and fsck.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  afs.ok(["ws", "create", "demo"]);
  afs.ok(["ws", "use", "demo"]);
});
afterAll(() => afs.cleanup());

interface Checkpoint {
  name: string;
  kind: string;
  description: string;
}

const write = (path: string, content: string) => afs.ok(["fs", "write", path, "--content", content]);

describe("afs cp", () => {
  it("creates checkpoints, named and automatic", () => {
    write("/a.txt", "one\ntwo\nthree\n");
    expect(afs.ok(["cp", "create", "v1", "--description", "first"])).toBe("created checkpoint v1 in demo\n");
    expect(afs.ok(["cp", "create"])).toBe("nothing to checkpoint: demo has no live changes (head is v1)\n");
    write("/b.txt", "bee\n");
    const auto = afs.json<{ checkpoint: Checkpoint; created: boolean }>(["cp", "create"]);
    expect(auto.created).toBe(true);
    expect(auto.checkpoint).toMatchObject({ kind: "manual" });
    expect(auto.checkpoint.name).toMatch(/^cp-\d+$/);
  });

  it("lists and shows checkpoints", () => {
    const list = afs.json<Checkpoint[]>(["cp", "list"]);
    expect(list.map((c) => c.name)).toEqual([expect.stringMatching(/^cp-/), "v1", "initial"]);
    const table = afs.ok(["cp", "list"]).split("\n");
    expect(table[0]).toMatch(/NAME\s+KIND\s+CREATED\s+ACTOR\s+DESCRIPTION/);
    expect(table.find((l) => l.includes("v1"))).toMatch(/^\s+v1\s+manual\s+.*tester\s+first$/);
    expect(table[1]).toMatch(/^\*\s+cp-/);
    expect(afs.json<Checkpoint>(["cp", "show", "v1"])).toMatchObject({ name: "v1", description: "first" });
    expect(afs.ok(["cp", "show", "v1"])).toMatch(/^checkpoint\s+v1\nkind\s+manual\ndescription first\n/);
  });

  it("diffs a checkpoint against the live state and against another checkpoint", () => {
    write("/a.txt", "one\nTWO\nthree\n");
    afs.ok(["fs", "rm", "/b.txt"]);
    write("/c.txt", "sea\n");
    const stat = afs.ok(["cp", "diff", "v1", "--stat"]);
    expect(stat).toBe("M /a.txt\nA /c.txt\nv1..live: 1 added, 1 modified, 0 deleted, 0 renamed\n");
    const full = afs.ok(["cp", "diff", "v1"]);
    expect(full).toContain("--- a/a.txt\n+++ b/a.txt\n");
    expect(full).toContain("-two\n+TWO\n");

    const json = afs.json<{
      base: string;
      target: string;
      summary: Record<string, number>;
      changes: { path: string; status: string; patch?: string }[];
    }>(["cp", "diff", "v1"]);
    expect(json).toMatchObject({ workspace: "demo", base: "v1", target: "live", summary: { added: 1, modified: 1 } });
    expect(json.changes.find((c) => c.path === "/a.txt")?.patch).toContain("+TWO");
    const statJson = afs.json<{ changes: { patch?: string }[] }>(["cp", "diff", "v1", "--stat"]);
    expect(statJson.changes.every((c) => c.patch === undefined)).toBe(true);

    const list = afs.json<Checkpoint[]>(["cp", "list"]);
    const latest = list[0]?.name as string;
    expect(afs.ok(["cp", "diff", "v1", latest, "--stat"])).toBe(
      `A /b.txt\nv1..${latest}: 1 added, 0 modified, 0 deleted, 0 renamed\n`,
    );
  });

  it("restores a checkpoint, saving the live changes as a safety checkpoint", () => {
    const out = afs.ok(["cp", "restore", "v1"]);
    expect(out).toMatch(/^restored demo to v1; the live changes were saved as checkpoint (safety-\d+)\n$/);
    const safety = /checkpoint (safety-\d+)/.exec(out)?.[1] as string;
    expect(afs.ok(["fs", "cat", "/a.txt"])).toBe("one\ntwo\nthree\n");
    expect(afs.run(["fs", "cat", "/c.txt"]).status).toBe(3);
    const list = afs.json<Checkpoint[]>(["cp", "list"]);
    expect(list.find((c) => c.name === safety)).toMatchObject({ kind: "safety" });
    // Restoring the safety checkpoint brings the live changes back; nothing to save this time.
    const back = afs.json<{ checkpoint: Checkpoint; safety: Checkpoint | null }>(["cp", "restore", safety]);
    expect(back.safety).toBeNull();
    expect(afs.ok(["fs", "cat", "/c.txt"])).toBe("sea\n");
  });

  it("deletes checkpoints but not the head", () => {
    expect(afs.ok(["cp", "delete", "v1"])).toBe("deleted checkpoint v1 from demo\n");
    expect(afs.json<Checkpoint[]>(["cp", "list"]).map((c) => c.name)).not.toContain("v1");
    const head = afs.json<{ head: string }>(["ws", "show"]).head;
    const r = afs.run(["cp", "delete", head]);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/^afs: checkpoint .* is the head of demo; .*\[CONFLICT\]\n$/);
  });

  it("reports unknown checkpoints and bad names", () => {
    const missing = afs.run(["cp", "show", "nope"]);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toBe(
      'afs: checkpoint "nope" does not exist in workspace demo; see afs cp list [NOT_FOUND]\n',
    );
    expect(afs.run(["cp", "diff", "nope"]).status).toBe(3);
    expect(afs.run(["cp", "restore", "nope"]).status).toBe(3);
    write("/d.txt", "dee\n");
    const bad = afs.run(["cp", "create", "no good"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^afs: invalid checkpoint name "no good".*\[INVALID_ARGUMENT\]\n$/);
    const wrongWs = afs.run(["cp", "list", "-w", "ghost"]);
    expect(wrongWs.status).toBe(3);
    expect(wrongWs.stderr).toMatch(/ghost.*\[NOT_FOUND\]\n$/);
  });
});

describe("afs gc and fsck", () => {
  it("collects garbage and reports what it did", () => {
    const gc = afs.json<{ blobs_deleted: number; trees_deleted: number; blobs_kept: number }>(["gc", "--grace", "0"]);
    expect(gc.blobs_kept).toBeGreaterThan(0);
    expect(afs.ok(["gc"])).toMatch(
      /^deleted 0 blobs and 0 trees \(0 B\); kept \d+ blobs and \d+ trees; swept 0 unused chunks \(0 B\)\nkept \d+ old versions? \([^)]*\) for history.*\n$/,
    );
    const bad = afs.run(["gc", "--grace", "soon"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^afs: .*expected a number of seconds/);
  });

  it("checks the store", () => {
    expect(afs.json<{ ok: boolean; problems: string[] }>(["fsck"])).toMatchObject({ ok: true, problems: [] });
    expect(afs.ok(["fsck"])).toMatch(/^ok: \d+ trees? and \d+ blobs? checked\n$/);
  });

  it("exits 1 and lists the problems when the store is damaged", () => {
    // Damage one stored blob behind afs's back, as a failing disk would.
    const db = new Database(join(afs.home, "afs.db"));
    db.prepare("UPDATE blobs SET data = ? WHERE hash = (SELECT hash FROM blobs ORDER BY hash LIMIT 1)").run(
      Buffer.from("garbage"),
    );
    db.close();
    const r = afs.run(["fsck"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^blob [0-9a-f]{64} does not match its content hash\n/m);
    expect(r.stdout).toMatch(/^1 problem found\n$/m);
    const json = afs.run(["fsck", "--json"]);
    expect(json.status).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, problems: [expect.stringMatching(/^blob /)] });
  });
});
