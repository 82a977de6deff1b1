// afs.history on every store (AFS_TEST_STORES): a file's versions newest first with who, how and
// which checkpoints hold them, renames followed; reading, diffing, restoring (a file, a subtree) and
// undeleting; and gc keeping old versions for the versioning window and letting them go after it.
import { afterEach, describe, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { sha256 } from "../../src/core/hash.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { retainedVersions } from "../../src/workspace/versioning.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";

const DAY = 24 * 60 * 60 * 1000;

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AfsError);
  return (e as AfsError).code;
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`afs.history on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;
    const open: Afs[] = [];
    const homes: (() => Promise<void>)[] = [];
    let n = 0;

    async function engine(): Promise<{ afs: Afs; ws: string }> {
      const home = await tempDir("afs-history-");
      homes.push(home.cleanup);
      const store = redis ? redis().url : `sqlite:${home.dir}/afs.db`;
      const afs = await Afs.open({ home: home.dir, store, actor: "ana", surface: "cli" });
      open.push(afs);
      const ws = `history-${process.pid}-${++n}`;
      await afs.workspaces.create(ws);
      return { afs, ws };
    }

    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((afs) => afs.close()));
      await Promise.allSettled(homes.splice(0).map((cleanup) => cleanup()));
    });

    const write = async (afs: Afs, ws: string, path: string, text: string, actor?: string, surface?: string) =>
      (await afs.workspaces.volume(ws, actor, surface)).writeFile(path, Buffer.from(text), { op: "write" });

    it("lists a file's versions newest first: who, through what, what, and the checkpoints holding each", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/notes.md", "one\n");
      await afs.checkpoints.create(ws, { name: "first" });
      await write(afs, ws, "/other.md", "unrelated\n");
      await write(afs, ws, "/notes.md", "two\n", "token:bot", "mcp");
      await afs.checkpoints.create(ws, { name: "second" });
      await write(afs, ws, "/other.md", "changed\n");
      await afs.checkpoints.create(ws, { name: "again" });
      await write(afs, ws, "/notes.md", "three\n");

      const { versions, next } = await afs.history.versions(ws, "notes.md");
      expect(next).toBeNull();
      expect(versions.map((v) => [v.id, v.op, v.actor, v.surface, v.size, v.checkpoints])).toEqual([
        [sha256("three\n").slice(0, 12), "write", "ana", "cli", 6, []],
        [sha256("two\n").slice(0, 12), "write", "token:bot", "mcp", 4, ["second", "again"]],
        [sha256("one\n").slice(0, 12), "write", "ana", "cli", 4, ["first"]],
      ]);
      expect(versions[0]).toMatchObject({ path: "/notes.md", sha256: sha256("three\n"), available: true });
      expect(versions[0]?.time).toEqual(expect.any(Number));
    });

    it("pages back with a cursor, ending with what the path held before its first change", async () => {
      const { afs, ws } = await engine();
      for (const text of ["a", "b", "c", "d"]) await write(afs, ws, "/f", text);
      // A fork starts with /f = "d" and no event for it: that content is the fork's base version.
      const forked = `${ws}-fork`;
      await afs.workspaces.fork(ws, forked);
      await write(afs, forked, "/f", "e");
      await write(afs, forked, "/f", "g");
      const first = await afs.history.versions(forked, "/f", { limit: 2 });
      expect(first.versions.map((v) => [v.op, v.sha256])).toEqual([
        ["write", sha256("g")],
        ["write", sha256("e")],
      ]);
      expect(first.next).not.toBeNull();
      const second = await afs.history.versions(forked, "/f", { limit: 2, cursor: first.next as string });
      expect(second.versions.map((v) => [v.op, v.seq, v.sha256])).toEqual([["base", null, sha256("d")]]);
      expect(second.next).toBeNull();
      // In the source, every version is an event.
      const all = await afs.history.versions(ws, "/f", { limit: 3 });
      expect(all.versions.map((v) => v.sha256)).toEqual(["d", "c", "b"].map((t) => sha256(t)));
      const rest = await afs.history.versions(ws, "/f", { limit: 3, cursor: all.next as string });
      expect(rest.versions.map((v) => v.sha256)).toEqual([sha256("a")]);
      expect(rest.next).toBeNull();
    });

    it("follows a file back through renames", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/draft.md", "v1");
      await write(afs, ws, "/draft.md", "v2");
      const volume = await afs.workspaces.volume(ws);
      await volume.rename("/draft.md", "/docs/final.md", {});
      await write(afs, ws, "/docs/final.md", "v3");
      // A new file under the old name is another file's history.
      await write(afs, ws, "/draft.md", "unrelated");
      const { versions } = await afs.history.versions(ws, "/docs/final.md");
      expect(versions.map((v) => [v.op, v.path, v.sha256])).toEqual([
        ["write", "/docs/final.md", sha256("v3")],
        ["rename", "/docs/final.md", sha256("v2")],
        ["write", "/draft.md", sha256("v2")],
        ["write", "/draft.md", sha256("v1")],
      ]);
      // Versions from before the rename are read under the file's new name.
      expect((await afs.history.read(ws, "/docs/final.md", sha256("v1").slice(0, 8))).data.toString()).toBe("v1");
    });

    it("shows what a checkpoint restore did to a file as a version of its own", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/f", "v1");
      await write(afs, ws, "/other", "o1");
      await afs.checkpoints.create(ws, { name: "one" });
      await write(afs, ws, "/f", "v2", "agent", "acp");
      await afs.checkpoints.restore(ws, "one");
      expect((await (await afs.workspaces.volume(ws)).readFile("/f")).toString()).toBe("v1");

      const { versions, next } = await afs.history.versions(ws, "/f");
      expect(next).toBeNull();
      expect(versions.map((v) => [v.op, v.actor, v.surface, v.sha256, v.size, v.checkpoints])).toEqual([
        ["restore", "ana", "cli", sha256("v1"), 2, ["one"]],
        ["write", "agent", "acp", sha256("v2"), 2, [expect.stringMatching(/^safety-/)]],
        ["write", "ana", "cli", sha256("v1"), 2, ["one"]],
      ]);
      expect(versions[0]?.seq).toBeGreaterThan(versions[1]?.seq as number);
      // A file the restore left alone has no restore in its history.
      expect((await afs.history.versions(ws, "/other")).versions.map((v) => v.op)).toEqual(["write"]);

      // Paging newest first keeps the restore in its place by seq.
      const first = await afs.history.versions(ws, "/f", { limit: 1 });
      // On a page of its own too, the restored content names the older checkpoint holding it.
      expect(first.versions.map((v) => [v.op, v.checkpoints])).toEqual([["restore", ["one"]]]);
      const second = await afs.history.versions(ws, "/f", { limit: 1, cursor: first.next as string });
      expect(second.versions.map((v) => [v.op, v.sha256])).toEqual([["write", sha256("v2")]]);
      const third = await afs.history.versions(ws, "/f", { limit: 1, cursor: second.next as string });
      expect(third.versions.map((v) => [v.op, v.sha256])).toEqual([["write", sha256("v1")]]);
      expect(third.next).toBeNull();

      // Writes after the restore come first; the restore stays between them and the old ones.
      await write(afs, ws, "/f", "v3");
      const after = await afs.history.versions(ws, "/f", { limit: 2 });
      expect(after.versions.map((v) => [v.op, v.sha256])).toEqual([
        ["write", sha256("v3")],
        ["restore", sha256("v1")],
      ]);
    });

    it("shows a restore that took a file away as a deletion, and undelete brings the file back", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/keep", "k");
      await afs.checkpoints.create(ws, { name: "before" });
      await write(afs, ws, "/late.txt", "made after the checkpoint");
      await afs.checkpoints.restore(ws, "before");
      const volume = await afs.workspaces.volume(ws);
      expect(await volume.stat("/late.txt")).toBeNull();

      const { versions } = await afs.history.versions(ws, "/late.txt");
      expect(versions.map((v) => [v.op, v.id, v.sha256, v.size])).toEqual([
        ["restore", null, null, null],
        ["write", sha256("made after the checkpoint").slice(0, 12), sha256("made after the checkpoint"), 25],
      ]);
      const back = await afs.history.undelete(ws, "/late.txt");
      expect(back).toMatchObject({ kind: "file", sha256: sha256("made after the checkpoint") });
      expect((await volume.readFile("/late.txt")).toString()).toBe("made after the checkpoint");
    });

    it("undeletes what a restore brought back and a later restore took away", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/keep", "k");
      await afs.checkpoints.create(ws, { name: "empty" });
      await write(afs, ws, "/f", "v1");
      await afs.checkpoints.create(ws, { name: "v1" });
      await write(afs, ws, "/f", "v2");
      await afs.checkpoints.restore(ws, "v1");
      await afs.checkpoints.restore(ws, "empty");
      // The newest own event of /f wrote v2, but the file last held v1, which a restore took away.
      expect((await afs.history.versions(ws, "/f")).versions.map((v) => [v.op, v.sha256])).toEqual([
        ["restore", null],
        ["restore", sha256("v1")],
        ["write", sha256("v2")],
        ["write", sha256("v1")],
      ]);
      expect(await afs.history.undelete(ws, "/f")).toMatchObject({ sha256: sha256("v1") });
    });

    it("follows a file back through a rename to a restore it went through under its old name", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/a", "v1");
      await afs.checkpoints.create(ws, { name: "one" });
      await write(afs, ws, "/a", "v2");
      await afs.checkpoints.restore(ws, "one");
      await (await afs.workspaces.volume(ws)).rename("/a", "/b", {});
      await write(afs, ws, "/b", "v3");
      const { versions } = await afs.history.versions(ws, "/b");
      expect(versions.map((v) => [v.op, v.path, v.sha256])).toEqual([
        ["write", "/b", sha256("v3")],
        ["rename", "/b", sha256("v1")],
        ["restore", "/a", sha256("v1")],
        ["write", "/a", sha256("v2")],
        ["write", "/a", sha256("v1")],
      ]);
    });

    it("sees a restore another engine sharing the store made after this one read the history", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/f", "v1");
      await afs.checkpoints.create(ws, { name: "one" });
      await write(afs, ws, "/f", "v2");
      expect((await afs.history.versions(ws, "/f")).versions.map((v) => v.op)).toEqual(["write", "write"]);
      const home = await tempDir("afs-history-other-");
      homes.push(home.cleanup);
      const other = await Afs.open({ home: home.dir, store: afs.storeUrl, actor: "bo", surface: "mcp" });
      open.push(other);
      await other.checkpoints.restore(ws, "one");
      expect((await afs.history.versions(ws, "/f")).versions.map((v) => [v.op, v.actor, v.sha256])).toEqual([
        ["restore", "bo", sha256("v1")],
        ["write", "ana", sha256("v2")],
        ["write", "ana", sha256("v1")],
      ]);
      // A workspace made again under the same name has none of the old one's restores.
      await afs.workspaces.delete(ws);
      await afs.workspaces.create(ws);
      for (const text of ["a", "b", "c", "d", "e", "f"]) await write(afs, ws, "/f", text);
      expect((await afs.history.versions(ws, "/f")).versions.map((v) => v.op)).not.toContain("restore");
    });

    it("lists the rest of the history when gc took a tree a restore went from", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/f", "v1");
      await afs.checkpoints.create(ws, { name: "one" });
      await write(afs, ws, "/f", "v2");
      await afs.checkpoints.create(ws, { name: "two" });
      await afs.checkpoints.restore(ws, "one");
      await afs.checkpoints.delete(ws, "two");
      await afs.maintenance.gc({ graceMs: 0 });
      // A fresh engine: nothing read before the gc is cached.
      const home = await tempDir("afs-history-fresh-");
      homes.push(home.cleanup);
      const fresh = await Afs.open({ home: home.dir, store: afs.storeUrl });
      open.push(fresh);
      expect((await fresh.history.versions(ws, "/f")).versions.map((v) => [v.op, v.sha256])).toEqual([
        ["write", sha256("v2")],
        ["write", sha256("v1")],
      ]);
    });

    it("reads and diffs versions by id or checkpoint, to another version or the live file", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/a.txt", "line 1\nline 2\n");
      await afs.checkpoints.create(ws, { name: "before" });
      await write(afs, ws, "/a.txt", "line 1\nline two\n");
      const [newest, oldest] = (await afs.history.versions(ws, "/a.txt")).versions;
      const byId = await afs.history.read(ws, "/a.txt", oldest?.id as string);
      expect(byId).toMatchObject({ version: `version ${oldest?.id}`, size: 14 });
      expect(byId.data.toString()).toBe("line 1\nline 2\n");
      expect((await afs.history.read(ws, "/a.txt", "before")).data.toString()).toBe("line 1\nline 2\n");

      const live = await afs.history.diff(ws, "/a.txt", "before");
      expect(live).toMatchObject({ from: "checkpoint before", to: "live", binary: false });
      expect(live.patch).toContain("-line 2\n+line two\n");
      const between = await afs.history.diff(ws, "/a.txt", newest?.id as string, oldest?.id as string);
      expect(between.patch).toContain("-line two\n+line 2\n");
      expect((await afs.history.diff(ws, "/a.txt", newest?.id as string)).patch).toBe("");

      expect(await codeOf(afs.history.read(ws, "/a.txt", "ffffffff"))).toBe("NOT_FOUND");
      expect(await codeOf(afs.history.read(ws, "/a.txt", "no-such-checkpoint"))).toBe("NOT_FOUND");
      expect(await codeOf(afs.history.read(ws, "/missing.txt", "before"))).toBe("NOT_FOUND");
    });

    it("restores one file as one change, recorded with who restored it", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/f", "good");
      await write(afs, ws, "/f", "broken by the agent", "agent", "acp");
      const good = (await afs.history.versions(ws, "/f")).versions[1]?.id as string;
      const before = (await afs.workspaces.get(ws)).revision;
      const done = await afs.history.restore(ws, "/f", good);
      expect(done).toMatchObject({ path: "/f", from: `version ${good}`, kind: "file", sha256: sha256("good") });
      expect(done.revision).toBe(before + 1);
      expect((await (await afs.workspaces.volume(ws)).readFile("/f")).toString()).toBe("good");
      const [restored] = (await afs.history.versions(ws, "/f")).versions;
      expect(restored).toMatchObject({ op: "restore_version", actor: "ana", surface: "cli", sha256: sha256("good") });
      // Restoring what is already there changes nothing.
      expect((await afs.history.restore(ws, "/f", good)).revision).toBe(done.revision);
    });

    it("restores a whole subtree from a checkpoint as one change, an event per file it changes", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/src/a.ts", "a1");
      await write(afs, ws, "/src/lib/b.ts", "b1");
      await write(afs, ws, "/keep.md", "outside");
      await afs.checkpoints.create(ws, { name: "good" });
      await write(afs, ws, "/src/a.ts", "a2");
      await (await afs.workspaces.volume(ws)).remove("/src/lib/b.ts", {});
      await write(afs, ws, "/src/new.ts", "new");
      await write(afs, ws, "/keep.md", "outside, changed");
      const before = (await afs.workspaces.get(ws)).revision;

      const done = await afs.history.restore(ws, "/src", "good");
      expect(done).toMatchObject({ kind: "dir", from: "checkpoint good" });
      const volume = await afs.workspaces.volume(ws);
      const files = [];
      for await (const s of volume.walk("/src")) if (s.kind === "file") files.push(s.path);
      expect(files.sort()).toEqual(["/src/a.ts", "/src/lib/b.ts"]);
      expect((await volume.readFile("/src/a.ts")).toString()).toBe("a1");
      expect((await volume.readFile("/keep.md")).toString()).toBe("outside, changed");
      const events = (await afs.events.list(ws, { after: before })).events;
      expect(events.map((e) => [e.op, e.path, e.newHash])).toEqual([
        ["restore_version", "/src/a.ts", sha256("a1")],
        ["restore_version", "/src/lib/b.ts", sha256("b1")],
        ["restore_version", "/src/new.ts", null],
      ]);
      // One commit: its events take the revisions up to the one it returned, at one time.
      expect(done.revision).toBe(before + events.length);
      expect(new Set(events.map((e) => e.time)).size).toBe(1);
    });

    it("undeletes a file's last version, a directory from a checkpoint, and refuses what exists", async () => {
      const { afs, ws } = await engine();
      const volume = await afs.workspaces.volume(ws);
      await write(afs, ws, "/gone.txt", "first");
      await write(afs, ws, "/gone.txt", "last");
      await volume.remove("/gone.txt", {});
      expect(await codeOf(afs.history.undelete(ws, "/never.txt"))).toBe("NOT_FOUND");
      const done = await afs.history.undelete(ws, "/gone.txt");
      expect(done).toMatchObject({ kind: "file", sha256: sha256("last") });
      expect((await volume.readFile("/gone.txt")).toString()).toBe("last");
      expect(await codeOf(afs.history.undelete(ws, "/gone.txt"))).toBe("ALREADY_EXISTS");

      await write(afs, ws, "/dir/x", "x");
      await afs.checkpoints.create(ws, { name: "with-dir" });
      await write(afs, ws, "/dir/y", "y, never checkpointed");
      await volume.remove("/dir", { recursive: true });
      // A file gone with its directory: its last change names what it held.
      expect(await afs.history.undelete(ws, "/dir/y")).toMatchObject({ sha256: sha256("y, never checkpointed") });
      await volume.remove("/dir", { recursive: true });
      expect((await afs.history.undelete(ws, "/dir")).from).toBe("checkpoint with-dir");
      expect((await volume.readFile("/dir/x")).toString()).toBe("x");
    });

    it("keeps versions between checkpoints through gc within the window, and lets them go after it", async () => {
      const { afs, ws } = await engine();
      const volume = await afs.workspaces.volume(ws);
      await write(afs, ws, "/f", "v1");
      await afs.checkpoints.create(ws, { name: "one" });
      await write(afs, ws, "/f", "between");
      await write(afs, ws, "/f", "v3");
      await afs.checkpoints.create(ws, { name: "two" });
      await write(afs, ws, "/deleted", "doomed");
      await volume.remove("/deleted", {});

      const gc = await afs.maintenance.gc({ graceMs: 0 });
      expect(gc.versions_kept).toBeGreaterThanOrEqual(2);
      expect(gc.versions_by_workspace[ws]).toBeGreaterThanOrEqual(4);
      const between = sha256("between").slice(0, 12);
      expect((await afs.history.read(ws, "/f", between)).data.toString()).toBe("between");
      expect((await afs.history.undelete(ws, "/deleted")).sha256).toBe(sha256("doomed"));

      // Eight days on, the default window (7 days) no longer names them.
      const { store } = internalsOf(afs);
      const later = await retainedVersions(store, Date.now() + 8 * DAY);
      expect(later.blobs.has(sha256("between"))).toBe(false);
      // A count keeps the newest versions of each path whatever their age.
      await afs.history.setPolicy(ws, { keepVersions: 2 });
      const counted = await retainedVersions(store, Date.now() + 8 * DAY);
      expect(counted.blobs.has(sha256("v3"))).toBe(true);
      expect(counted.blobs.has(sha256("between"))).toBe(true);
      expect(counted.blobs.has(sha256("v1"))).toBe(false);

      // Versioning off: gc takes what only history named.
      expect(await afs.history.setPolicy(ws, { off: true })).toMatchObject({ enabled: false });
      const off = await afs.maintenance.gc({ graceMs: 0 });
      expect(off.versions_by_workspace[ws]).toBeUndefined();
      expect(await codeOf(afs.history.read(ws, "/f", between))).toBe("NOT_FOUND");
      const [listed] = (await afs.history.versions(ws, "/f", { limit: 3 })).versions.filter((v) => v.id === between);
      expect(listed).toMatchObject({ available: false, size: null });
      // What checkpoints hold stays.
      expect((await afs.history.read(ws, "/f", "one")).data.toString()).toBe("v1");
    });

    it("afs migrate carries old versions and the policy to the target store", async () => {
      const { afs, ws } = await engine();
      await write(afs, ws, "/f", "old");
      await write(afs, ws, "/f", "new");
      await afs.history.setPolicy(ws, { keepDays: 3 });
      const target = await tempDir("afs-history-target-");
      homes.push(target.cleanup);
      await Afs.migrate(afs.storeUrl, `sqlite:${target.dir}/afs.db`, { workspaces: [ws] });
      const there = await Afs.open({ home: target.dir, store: `sqlite:${target.dir}/afs.db` });
      open.push(there);
      expect((await there.history.read(ws, "/f", sha256("old").slice(0, 12))).data.toString()).toBe("old");
      expect(await there.history.policy(ws)).toMatchObject({ keepDays: 3 });
    });

    it("keeps the policy with the workspace and checks what it is given", async () => {
      const { afs, ws } = await engine();
      expect(await afs.history.policy(ws)).toEqual({ enabled: true, keepDays: 7, keepVersions: 0 });
      expect(await afs.history.setPolicy(ws, { keepDays: 30 })).toEqual({
        enabled: true,
        keepDays: 30,
        keepVersions: 0,
      });
      expect(await afs.history.setPolicy(ws, { off: true })).toMatchObject({ enabled: false, keepDays: 30 });
      expect(await afs.history.setPolicy(ws, { keepVersions: 5 })).toEqual({
        enabled: true,
        keepDays: 30,
        keepVersions: 5,
      });
      expect(await codeOf(afs.history.setPolicy(ws, { keepDays: -1 }))).toBe("INVALID_ARGUMENT");
      expect(await codeOf(afs.history.policy("missing"))).toBe("NOT_FOUND");
    });
  });
}
