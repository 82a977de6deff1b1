// The Store contract: every Store implementation (SQLite, Redis, …) runs this one suite, so the
// layers above can rely on exactly what store.ts promises and nothing an implementation adds.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect } from "vitest";
import type { Entry } from "../../src/core/entry.js";
import { type Hash, sha256 } from "../../src/core/hash.js";
import type {
  CheckpointRecord,
  EventInput,
  OverlayRow,
  Store,
  WorkspaceDump,
  WorkspaceRecord,
} from "../../src/store/store.js";
import { type Skip, skippable } from "./skip.js";

export type StoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> }>;

const bytes = (s: string): Buffer => Buffer.from(s, "utf8");
const obj = (s: string): { hash: Hash; data: Buffer } => ({ hash: sha256(s), data: bytes(s) });
const file = (content: string, mtime = 1000): Entry => ({
  kind: "file",
  hash: sha256(content),
  size: content.length,
  mode: 0o644,
  mtime,
});
const dir = (treeData: string): Entry => ({ kind: "dir", hash: sha256(treeData), size: 0, mode: 0o755, mtime: 1000 });
const event = (path: string, op = "write"): EventInput => ({
  op,
  path,
  oldHash: null,
  newHash: sha256(path),
  actor: "tester",
  surface: "test",
});

function checkpoint(workspace: string, name: string, over: Partial<CheckpointRecord> = {}): CheckpointRecord {
  return {
    id: randomUUID(),
    workspace,
    name,
    root: sha256("[]"),
    parent: null,
    createdAt: 1_000_000,
    actor: "tester",
    kind: "manual",
    description: `checkpoint ${name}`,
    ...over,
  };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `uncoded: ${String(e)}`;
  }
  return "resolved";
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export function storeContract(name: string, make: StoreFactory, options: { skip?: Skip[] } = {}): void {
  /** The suite's `it`, skipping what options.skip lists with its reason. */
  const it = skippable(options.skip);
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(async () => {
      await cleanup();
    });

    /** A workspace at revision 0 whose head is an "initial" checkpoint over a stored root tree. */
    async function workspace(name = "ws", root = "[]"): Promise<{ ws: WorkspaceRecord; initial: CheckpointRecord }> {
      await store.putTrees([obj(root)]);
      const initial = checkpoint(name, "initial", { kind: "initial", root: sha256(root), createdAt: 1_000 });
      const ws: WorkspaceRecord = {
        name,
        description: `workspace ${name}`,
        head: initial.id,
        revision: 0,
        createdAt: 1_000,
        updatedAt: 1_000,
      };
      await store.createWorkspace(ws, initial);
      return { ws, initial };
    }

    /** Commits rows on top of the current revision; returns the new revision. */
    async function commitRows(ws: string, set: OverlayRow[], clearUnder?: string[]): Promise<number> {
      const current = await store.getWorkspace(ws);
      if (!current) throw new Error(`no workspace ${ws}`);
      return store.commit(ws, {
        expectRevision: current.revision,
        clearUnder,
        set,
        events: [event(set[0]?.path ?? "/")],
      });
    }

    describe("objects", () => {
      it("stores blobs and trees by hash, byte for byte, and reports what it has", async () => {
        const a = obj("alpha");
        const binary = { hash: sha256(new Uint8Array([0, 255, 1, 254])), data: new Uint8Array([0, 255, 1, 254]) };
        const empty = obj("");
        await store.putBlobs([a, binary, empty]);
        expect((await store.getBlob(a.hash))?.toString()).toBe("alpha");
        expect([...((await store.getBlob(binary.hash)) ?? [])]).toEqual([0, 255, 1, 254]);
        const got = await store.getBlob(empty.hash);
        expect(got).not.toBeNull();
        expect(got?.length).toBe(0);
        expect(await store.getBlob(sha256("missing"))).toBeNull();
        expect(await store.hasBlobs([a.hash, sha256("missing"), empty.hash])).toEqual(new Set([a.hash, empty.hash]));
        expect(await store.hasBlobs([])).toEqual(new Set());

        const t = obj('[["a","f"]]');
        await store.putTrees([t]);
        expect((await store.getTree(t.hash))?.toString()).toBe('[["a","f"]]');
        expect(await store.getTree(sha256("missing"))).toBeNull();
      });

      it("keeps blobs and trees apart", async () => {
        const x = obj("same bytes");
        await store.putBlobs([x]);
        expect(await store.getTree(x.hash)).toBeNull();
        await store.putTrees([x]);
        expect(await store.deleteObjects("tree", [x.hash])).toBe(1);
        expect((await store.getBlob(x.hash))?.toString()).toBe("same bytes");
      });

      it("treats putting an existing object as a no-op and stores duplicates once", async () => {
        const a = obj("alpha");
        await store.putBlobs([a, a]);
        await store.putBlobs([a]);
        // Content addressing means the first bytes stand; a later put under the same hash changes nothing.
        await store.putBlobs([{ hash: a.hash, data: bytes("impostor") }]);
        expect((await store.getBlob(a.hash))?.toString()).toBe("alpha");
        const listed = await collect(store.listObjects("blob"));
        expect(listed.map((o) => o.hash)).toEqual([a.hash]);
        await store.putTrees([a, a]);
        expect(await collect(store.listObjects("tree"))).toHaveLength(1);
        await store.putBlobs([]);
        await store.putTrees([]);
      });

      it("lists objects with size and creation time, and deletes them", async () => {
        const before = Date.now();
        const blobs = Array.from({ length: 2500 }, (_, i) => obj(`blob ${i}`));
        await store.putBlobs(blobs);
        await store.putTrees([obj("[]")]);
        const after = Date.now();
        const listed = await collect(store.listObjects("blob"));
        expect(listed).toHaveLength(blobs.length);
        expect(new Set(listed.map((o) => o.hash))).toEqual(new Set(blobs.map((b) => b.hash)));
        const sizes = new Map(blobs.map((b) => [b.hash, b.data.length]));
        for (const o of listed) {
          expect(o.size).toBe(sizes.get(o.hash));
          expect(o.createdAt).toBeGreaterThanOrEqual(before - 1000);
          expect(o.createdAt).toBeLessThanOrEqual(after + 1000);
        }
        expect(await collect(store.listObjects("tree"))).toEqual([
          expect.objectContaining({ hash: sha256("[]"), size: 2 }),
        ]);

        const doomed = blobs.slice(0, 1200).map((b) => b.hash);
        expect(await store.deleteObjects("blob", [...doomed, sha256("never stored")])).toBe(1200);
        expect(await store.deleteObjects("blob", doomed)).toBe(0);
        expect(await store.deleteObjects("blob", [])).toBe(0);
        expect(await store.getBlob(doomed[0] as Hash)).toBeNull();
        expect(await collect(store.listObjects("blob"))).toHaveLength(1300);
        expect(await store.getTree(sha256("[]"))).not.toBeNull();
      });
    });

    describe("workspaces", () => {
      it("creates, gets, lists and deletes workspaces", async () => {
        expect(await store.listWorkspaces()).toEqual([]);
        expect(await store.getWorkspace("ws")).toBeNull();
        const { ws, initial } = await workspace("ws");
        await workspace("other");
        expect(await store.getWorkspace("ws")).toEqual(ws);
        expect((await store.listWorkspaces()).map((w) => w.name).sort()).toEqual(["other", "ws"]);
        expect(await store.getCheckpointById(initial.id)).toEqual(initial);
        expect(await store.listCheckpoints("ws")).toEqual([initial]);

        expect(await store.deleteWorkspace("ws")).toBe(true);
        expect(await store.deleteWorkspace("ws")).toBe(false);
        expect(await store.getWorkspace("ws")).toBeNull();
        expect((await store.listWorkspaces()).map((w) => w.name)).toEqual(["other"]);
        expect(await store.deleteWorkspace("never")).toBe(false);
      });

      it("refuses a taken name with ALREADY_EXISTS and records nothing of the attempt", async () => {
        const { ws } = await workspace("ws");
        const second = checkpoint("ws", "initial-2", { kind: "initial" });
        const clash: WorkspaceRecord = { ...ws, description: "clash", head: second.id };
        expect(await codeOf(store.createWorkspace(clash, second))).toBe("ALREADY_EXISTS");
        expect(await store.getWorkspace("ws")).toEqual(ws);
        expect(await store.getCheckpointById(second.id)).toBeNull();
        expect(await store.listCheckpoints("ws")).toHaveLength(1);
      });

      it("deletes a workspace's checkpoints, overlay and events, but not its objects", async () => {
        const { initial } = await workspace("ws");
        await store.putBlobs([obj("content")]);
        await commitRows("ws", [{ path: "/f", entry: file("content") }]);
        expect(await store.deleteWorkspace("ws")).toBe(true);
        expect(await store.getCheckpointById(initial.id)).toBeNull();
        expect(await store.listCheckpoints("ws")).toEqual([]);
        expect(await store.listEvents("ws", 0, 100)).toEqual([]);
        expect(await store.overlayCount("ws")).toBe(0);
        expect(await store.getBlob(sha256("content"))).not.toBeNull();
        expect(await store.getTree(initial.root)).not.toBeNull();

        // The name is free again, with a clean slate.
        await workspace("ws");
        expect(await store.overlayGet("ws", ["/f"])).toEqual(new Map());
        expect(await store.listEvents("ws", 0, 100)).toEqual([]);
        expect((await store.getWorkspace("ws"))?.revision).toBe(0);
      });
    });

    describe("workspace settings", () => {
      it("keeps small strings by key with the workspace, replaced, removed, and gone with it", async () => {
        await workspace("ws");
        await workspace("other");
        expect(await store.getWorkspaceSetting("ws", "versioning")).toBeNull();
        await store.setWorkspaceSetting("ws", "versioning", '{"keepDays":3}');
        await store.setWorkspaceSetting("ws", "other", "x");
        expect(await store.getWorkspaceSetting("ws", "versioning")).toBe('{"keepDays":3}');
        await store.setWorkspaceSetting("ws", "versioning", "off");
        expect(await store.getWorkspaceSetting("ws", "versioning")).toBe("off");
        expect(await store.getWorkspaceSetting("other", "versioning")).toBeNull();
        await store.setWorkspaceSetting("ws", "other", null);
        expect(await store.getWorkspaceSetting("ws", "other")).toBeNull();
        // A setting is no field of the workspace record.
        expect(Object.keys((await store.getWorkspace("ws")) ?? {}).sort()).toEqual(
          ["createdAt", "description", "head", "name", "revision", "updatedAt"].sort(),
        );
        expect(await codeOf(store.setWorkspaceSetting("missing", "versioning", "off"))).toBe("NOT_FOUND");
        expect(await store.getWorkspaceSetting("missing", "versioning")).toBeNull();
        expect(await store.deleteWorkspace("ws")).toBe(true);
        await workspace("ws");
        expect(await store.getWorkspaceSetting("ws", "versioning")).toBeNull();
      });
    });

    describe("templates", () => {
      it("marks, re-slugs, lists by slug and unmarks workspaces", async () => {
        await workspace("base");
        await workspace("other");
        expect(await store.listTemplates()).toEqual([]);
        await store.setTemplate("base", "python");
        await store.setTemplate("other", "go");
        await store.setTemplate("base", "python"); // the same again changes nothing
        expect(await store.listTemplates()).toEqual([
          { slug: "go", workspace: "other" },
          { slug: "python", workspace: "base" },
        ]);
        // A new slug replaces the old one: a workspace has at most one.
        await store.setTemplate("base", "py");
        expect(await store.listTemplates()).toEqual([
          { slug: "go", workspace: "other" },
          { slug: "py", workspace: "base" },
        ]);
        await store.setTemplate("other", null);
        await store.setTemplate("other", null); // unmarking a non-template is a no-op
        expect(await store.listTemplates()).toEqual([{ slug: "py", workspace: "base" }]);
      });

      it("refuses a slug another workspace holds, and a missing workspace, changing nothing", async () => {
        await workspace("base");
        await workspace("other");
        await store.setTemplate("base", "python");
        await store.setTemplate("other", "go");
        expect(await codeOf(store.setTemplate("other", "python"))).toBe("ALREADY_EXISTS");
        expect(await codeOf(store.setTemplate("ghost", "ghost"))).toBe("NOT_FOUND");
        expect(await store.listTemplates()).toEqual([
          { slug: "go", workspace: "other" },
          { slug: "python", workspace: "base" },
        ]);
      });

      it("a deleted workspace takes its mark with it; its slug and name are free again", async () => {
        await workspace("base");
        await store.setTemplate("base", "python");
        expect(await store.deleteWorkspace("base")).toBe(true);
        expect(await store.listTemplates()).toEqual([]);
        await workspace("base");
        expect(await store.listTemplates()).toEqual([]);
        await workspace("next");
        await store.setTemplate("next", "python");
        expect(await store.listTemplates()).toEqual([{ slug: "python", workspace: "next" }]);
      });
    });

    describe("overlay", () => {
      const paths = ["/a", "/a/b", "/a/b/c", "/a/bc", "/a.b", "/a0", "/ab", "/ab/c", "/b"];

      beforeEach(async () => {
        await workspace("ws");
        await workspace("other");
        await commitRows(
          "ws",
          paths.map((path) => ({ path, entry: path === "/a.b" ? null : file(path) })),
        );
        await commitRows("other", [{ path: "/a/b", entry: file("other") }]);
      });

      it("gets rows by path, telling deletions (null) from absent paths (no key)", async () => {
        const got = await store.overlayGet("ws", ["/a", "/a.b", "/nope", "/a/b/c"]);
        expect(got).toEqual(
          new Map<string, Entry | null>([
            ["/a", file("/a")],
            ["/a.b", null],
            ["/a/b/c", file("/a/b/c")],
          ]),
        );
        expect(await store.overlayGet("ws", [])).toEqual(new Map());
        expect(await store.overlayGet("other", ["/a/b", "/a"])).toEqual(new Map([["/a/b", file("other")]]));
        expect(await store.overlayGet("missing", ["/a"])).toEqual(new Map());
        expect(await store.overlayCount("ws")).toBe(paths.length);
        expect(await store.overlayCount("other")).toBe(1);
        expect(await store.overlayCount("missing")).toBe(0);
      });

      it("lists rows strictly below a directory, sorted by path, without prefix look-alikes", async () => {
        const under = async (d: string, childrenOnly?: boolean) =>
          (await store.overlayUnder("ws", d, childrenOnly)).map((r) => r.path);
        expect(await under("/a")).toEqual(["/a/b", "/a/b/c", "/a/bc"]);
        expect(await under("/a", true)).toEqual(["/a/b", "/a/bc"]);
        expect(await under("/a/b")).toEqual(["/a/b/c"]);
        expect(await under("/a/b/c")).toEqual([]);
        expect(await under("/ab")).toEqual(["/ab/c"]);
        expect(await under("/a.b")).toEqual([]);
        expect(await under("/")).toEqual([...paths].sort());
        expect(await under("/", true)).toEqual(["/a", "/a.b", "/a0", "/ab", "/b"]);
        expect(await under("/zzz")).toEqual([]);
        expect(await store.overlayUnder("ws", "/", true)).toContainEqual({ path: "/a.b", entry: null });
        expect(await store.overlayUnder("other", "/")).toEqual([{ path: "/a/b", entry: file("other") }]);
      });

      it("handles names beyond ASCII", async () => {
        const names = ["/ü", "/ü/x", "/日本", "/日本/語", "/😀", "/😀/y", "/z"];
        await commitRows(
          "other",
          names.map((path) => ({ path, entry: file(path) })),
        );
        expect(new Set((await store.overlayUnder("other", "/ü")).map((r) => r.path))).toEqual(new Set(["/ü/x"]));
        expect(new Set((await store.overlayUnder("other", "/😀")).map((r) => r.path))).toEqual(new Set(["/😀/y"]));
        expect(new Set((await store.overlayUnder("other", "/", true)).map((r) => r.path))).toEqual(
          new Set(["/ü", "/日本", "/😀", "/z"]),
        );
        expect((await store.overlayGet("other", ["/日本/語"])).get("/日本/語")).toEqual(file("/日本/語"));
      });

      it("clears rows strictly below directories before setting new ones", async () => {
        await commitRows("ws", [{ path: "/a/new", entry: file("new") }], ["/a"]);
        expect((await store.overlayUnder("ws", "/")).map((r) => r.path)).toEqual([
          "/a",
          "/a.b",
          "/a/new",
          "/a0",
          "/ab",
          "/ab/c",
          "/b",
        ]);
        await commitRows("ws", [{ path: "/c", entry: file("c") }], ["/"]);
        expect(await store.overlayUnder("ws", "/")).toEqual([{ path: "/c", entry: file("c") }]);
        expect(await store.overlayCount("other")).toBe(1);
      });

      it("replaces a row set twice, the last one winning", async () => {
        await commitRows("ws", [
          { path: "/a", entry: file("first") },
          { path: "/a", entry: null },
          { path: "/b", entry: null },
          { path: "/b", entry: dir("[]") },
        ]);
        const got = await store.overlayGet("ws", ["/a", "/b"]);
        expect(got).toEqual(
          new Map<string, Entry | null>([
            ["/a", null],
            ["/b", dir("[]")],
          ]),
        );
      });
    });

    describe("commit", () => {
      it("applies a change at the expected revision, numbering events consecutively", async () => {
        const { ws } = await workspace("ws");
        const before = Date.now();
        const r1 = await store.commit("ws", {
          expectRevision: 0,
          set: [{ path: "/x", entry: file("x") }],
          events: [event("/x", "write"), event("/y", "mkdir")],
        });
        expect(r1).toBe(2);
        const r2 = await store.commit("ws", { expectRevision: 2, set: [], events: [event("/z", "delete")] });
        expect(r2).toBe(3);
        const now = await store.getWorkspace("ws");
        expect(now).toMatchObject({ ...ws, revision: 3, updatedAt: expect.any(Number) });
        expect(now?.updatedAt).toBeGreaterThanOrEqual(before - 1000);

        const events = await store.listEvents("ws", 0, 100);
        expect(events.map((e) => [e.seq, e.op, e.path])).toEqual([
          [1, "write", "/x"],
          [2, "mkdir", "/y"],
          [3, "delete", "/z"],
        ]);
        expect(events[0]).toEqual({
          ...event("/x", "write"),
          workspace: "ws",
          seq: 1,
          time: expect.any(Number),
        });
        expect(events[0]?.time).toBeGreaterThanOrEqual(before - 1000);
      });

      it("refuses a stale revision with CONFLICT and applies nothing", async () => {
        await workspace("ws");
        await commitRows("ws", [{ path: "/x", entry: file("x") }]);
        const stale = store.commit("ws", {
          expectRevision: 0,
          clearUnder: ["/"],
          set: [{ path: "/y", entry: file("y") }],
          events: [event("/y")],
        });
        expect(await codeOf(stale)).toBe("CONFLICT");
        const ahead = store.commit("ws", { expectRevision: 7, set: [], events: [event("/q")] });
        expect(await codeOf(ahead)).toBe("CONFLICT");
        expect((await store.getWorkspace("ws"))?.revision).toBe(1);
        expect(await store.overlayUnder("ws", "/")).toEqual([{ path: "/x", entry: file("x") }]);
        expect(await store.listEvents("ws", 0, 100)).toHaveLength(1);
      });

      it("lets exactly one of several commits from the same revision land", async () => {
        await workspace("ws");
        const attempts = Array.from({ length: 8 }, (_, i) =>
          store.commit("ws", {
            expectRevision: 0,
            set: [{ path: `/f${i}`, entry: file(`${i}`) }],
            events: [event("/")],
          }),
        );
        const results = await Promise.allSettled(attempts);
        expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
        for (const r of results) {
          if (r.status === "rejected") expect((r.reason as { code: string }).code).toBe("CONFLICT");
        }
        expect(await store.overlayCount("ws")).toBe(1);
        expect((await store.getWorkspace("ws"))?.revision).toBe(1);
      });

      it("fails with NOT_FOUND on a missing workspace", async () => {
        const p = store.commit("nope", { expectRevision: 0, set: [], events: [event("/")] });
        expect(await codeOf(p)).toBe("NOT_FOUND");
      });
    });

    describe("moveHead", () => {
      it("records a new checkpoint, makes it head and clears the overlay", async () => {
        const { initial } = await workspace("ws");
        await commitRows("ws", [{ path: "/x", entry: file("x") }]);
        await store.putTrees([obj("[1]")]);
        const cp = checkpoint("ws", "first", { root: sha256("[1]"), parent: initial.id, createdAt: 2_000 });
        const revision = await store.moveHead("ws", {
          expectRevision: 1,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: true,
          event: {
            op: "checkpoint",
            path: "/",
            oldHash: initial.root,
            newHash: cp.root,
            actor: "tester",
            surface: "test",
          },
        });
        expect(revision).toBe(2);
        expect(await store.getWorkspace("ws")).toMatchObject({ head: cp.id, revision: 2 });
        expect(await store.getCheckpointById(cp.id)).toEqual(cp);
        expect(await store.overlayCount("ws")).toBe(0);
        const events = await store.listEvents("ws", 1, 10);
        expect(events).toEqual([
          {
            op: "checkpoint",
            path: "/",
            oldHash: initial.root,
            newHash: cp.root,
            actor: "tester",
            surface: "test",
            workspace: "ws",
            seq: 2,
            time: expect.any(Number),
          },
        ]);
      });

      it("moves to an existing checkpoint, keeping the overlay unless asked to clear it", async () => {
        const { initial } = await workspace("ws");
        const cp = checkpoint("ws", "first", { parent: initial.id, createdAt: 2_000 });
        await store.moveHead("ws", {
          expectRevision: 0,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: false,
          event: event("/", "checkpoint"),
        });
        await commitRows("ws", [{ path: "/x", entry: file("x") }]);
        expect(
          await store.moveHead("ws", {
            expectRevision: 2,
            checkpoint: null,
            head: initial.id,
            clearOverlay: false,
            event: event("/", "restore"),
          }),
        ).toBe(3);
        expect(await store.getWorkspace("ws")).toMatchObject({ head: initial.id, revision: 3 });
        expect(await store.overlayCount("ws")).toBe(1);
        expect(await store.listCheckpoints("ws")).toHaveLength(2);
        await store.moveHead("ws", {
          expectRevision: 3,
          checkpoint: null,
          head: cp.id,
          clearOverlay: true,
          event: event("/", "restore"),
        });
        expect(await store.overlayCount("ws")).toBe(0);
        expect((await store.listEvents("ws", 0, 10)).map((e) => [e.seq, e.op])).toEqual([
          [1, "checkpoint"],
          [2, "write"],
          [3, "restore"],
          [4, "restore"],
        ]);
      });

      it("refuses a stale revision with CONFLICT, recording no checkpoint", async () => {
        const { initial } = await workspace("ws");
        await commitRows("ws", [{ path: "/x", entry: file("x") }]);
        const cp = checkpoint("ws", "late");
        const p = store.moveHead("ws", {
          expectRevision: 0,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: true,
          event: event("/", "checkpoint"),
        });
        expect(await codeOf(p)).toBe("CONFLICT");
        expect(await store.getCheckpointById(cp.id)).toBeNull();
        expect(await store.getWorkspace("ws")).toMatchObject({ head: initial.id, revision: 1 });
        expect(await store.overlayCount("ws")).toBe(1);
        expect(await store.listEvents("ws", 0, 10)).toHaveLength(1);
      });

      it("fails with NOT_FOUND on a missing workspace", async () => {
        const cp = checkpoint("nope", "x");
        const p = store.moveHead("nope", {
          expectRevision: 0,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: true,
          event: event("/", "checkpoint"),
        });
        expect(await codeOf(p)).toBe("NOT_FOUND");
        expect(await store.getCheckpointById(cp.id)).toBeNull();
      });
    });

    describe("checkpoints", () => {
      async function withHistory() {
        const { initial } = await workspace("ws");
        const first = checkpoint("ws", "first", { parent: initial.id, createdAt: 2_000, kind: "manual" });
        const second = checkpoint("ws", "second", { parent: first.id, createdAt: 3_000, kind: "auto" });
        let revision = 0;
        for (const cp of [first, second]) {
          revision = await store.moveHead("ws", {
            expectRevision: revision,
            checkpoint: cp,
            head: cp.id,
            clearOverlay: true,
            event: event("/", "checkpoint"),
          });
        }
        return { initial, first, second };
      }

      it("lists newest first and finds a checkpoint by name or id within its workspace", async () => {
        const { initial, first, second } = await withHistory();
        const { initial: otherInitial } = await workspace("other");
        expect(await store.listCheckpoints("ws")).toEqual([second, first, initial]);
        expect(await store.getCheckpoint("ws", "first")).toEqual(first);
        expect(await store.getCheckpoint("ws", second.id)).toEqual(second);
        expect(await store.getCheckpoint("ws", "nope")).toBeNull();
        expect(await store.getCheckpoint("ws", otherInitial.id)).toBeNull();
        expect(await store.getCheckpoint("other", "initial")).toEqual(otherInitial);
        expect(await store.getCheckpointById(otherInitial.id)).toEqual(otherInitial);
        expect(await store.getCheckpointById("nope")).toBeNull();
        expect(await store.listCheckpoints("missing")).toEqual([]);
      });

      it("refuses to delete the head, and deleting another leaves its children intact", async () => {
        const { initial, first, second } = await withHistory();
        expect(await codeOf(store.deleteCheckpoint("ws", second.id))).toBe("CONFLICT");
        expect(await store.getCheckpointById(second.id)).toEqual(second);

        expect(await store.deleteCheckpoint("ws", first.id)).toBe(true);
        expect(await store.deleteCheckpoint("ws", first.id)).toBe(false);
        expect(await store.getCheckpoint("ws", "first")).toBeNull();
        // The child still names its (now deleted) parent: a parent is only an id.
        expect(await store.getCheckpointById(second.id)).toEqual(second);
        expect(await store.listCheckpoints("ws")).toEqual([second, initial]);
        const { initial: otherInitial } = await workspace("other");
        expect(await store.deleteCheckpoint("ws", otherInitial.id)).toBe(false);
        expect(await store.getCheckpointById(otherInitial.id)).toEqual(otherInitial);
      });
    });

    describe("events", () => {
      it("pages through the log after a sequence number", async () => {
        await workspace("ws");
        await store.commit("ws", {
          expectRevision: 0,
          set: [],
          events: ["/1", "/2", "/3", "/4", "/5"].map((p) => event(p)),
        });
        const page = async (after: number, limit: number) =>
          (await store.listEvents("ws", after, limit)).map((e) => e.seq);
        expect(await page(0, 2)).toEqual([1, 2]);
        expect(await page(2, 2)).toEqual([3, 4]);
        expect(await page(4, 2)).toEqual([5]);
        expect(await page(5, 2)).toEqual([]);
        expect(await page(0, 100)).toEqual([1, 2, 3, 4, 5]);
        expect((await store.listEvents("ws", 2, 1))[0]?.path).toBe("/3");
        expect(await store.listEvents("missing", 0, 10)).toEqual([]);
      });

      it("lists one path's events newest first, a page at a time below a sequence number", async () => {
        await workspace("ws");
        // "/a" among neighbours that share its prefix, which the index must keep apart.
        const paths = ["/a", "/a/b", "/ab", "/a", "/b", "/a", "/a b", "/a"];
        await store.commit("ws", { expectRevision: 0, set: [], events: paths.map((p) => event(p)) });
        await store.moveHead("ws", {
          expectRevision: paths.length,
          checkpoint: null,
          head: (await store.getWorkspace("ws"))?.head as string,
          clearOverlay: false,
          event: { ...event("/a", "restore"), surface: "cli" },
        });
        const seqs = async (path: string, before: number | null, limit: number) =>
          (await store.listPathEvents("ws", path, before, limit)).map((e) => e.seq);
        expect(await seqs("/a", null, 100)).toEqual([9, 8, 6, 4, 1]);
        expect(await seqs("/a", null, 2)).toEqual([9, 8]);
        expect(await seqs("/a", 8, 2)).toEqual([6, 4]);
        expect(await seqs("/a", 4, 2)).toEqual([1]);
        expect(await seqs("/a", 1, 2)).toEqual([]);
        expect(await seqs("/a/b", null, 10)).toEqual([2]);
        expect(await seqs("/a b", null, 10)).toEqual([7]);
        expect(await seqs("/nothing", null, 10)).toEqual([]);
        expect(await seqs("/a", null, 0)).toEqual([]);
        // Whole records, as listEvents gives them.
        const [newest] = await store.listPathEvents("ws", "/a", null, 1);
        expect(newest).toEqual((await store.listEvents("ws", 8, 1))[0]);
        expect(newest).toMatchObject({ op: "restore", surface: "cli", workspace: "ws" });
        expect(await store.listPathEvents("missing", "/a", null, 10)).toEqual([]);
      });

      it("keeps the path index with the workspace: imported, and gone with a deleted workspace", async () => {
        await workspace("ws");
        await store.commit("ws", { expectRevision: 0, set: [], events: [event("/f"), event("/g"), event("/f")] });
        const dump = {
          workspace: { ...(await store.getWorkspace("ws")), name: "copy" } as WorkspaceRecord,
          checkpoints: (await store.listCheckpoints("ws")).map((cp) => ({
            ...cp,
            id: randomUUID(),
            workspace: "copy",
          })),
          overlay: [],
          events: (await store.listEvents("ws", 0, 10)).map((e) => ({ ...e, workspace: "copy" })),
        };
        dump.workspace.head = dump.checkpoints[0]?.id as string;
        await store.importWorkspace(dump);
        expect((await store.listPathEvents("copy", "/f", null, 10)).map((e) => e.seq)).toEqual([3, 1]);
        expect(await store.deleteWorkspace("ws")).toBe(true);
        await workspace("ws");
        expect(await store.listPathEvents("ws", "/f", null, 10)).toEqual([]);
      });

      it("follows the log: events after the start, in order, as they are appended, until closed", async () => {
        await workspace("ws");
        await store.commit("ws", { expectRevision: 0, set: [], events: [event("/before")] });
        const seen: string[] = [];
        let batches = 0;
        const follower = store.followEvents("ws", 1, async (batch) => {
          batches++;
          // A slow consumer: the next batch must wait for this one.
          await new Promise((r) => setTimeout(r, 20));
          for (const e of batch) seen.push(`${e.seq}:${e.path}`);
        });
        const until = async (n: number): Promise<void> => {
          const deadline = Date.now() + 5_000;
          while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        };
        await store.commit("ws", { expectRevision: 1, set: [], events: [event("/a"), event("/b")] });
        await until(2);
        await store.commit("ws", { expectRevision: 3, set: [], events: [event("/c")] });
        await until(3);
        expect(seen).toEqual(["2:/a", "3:/b", "4:/c"]);
        expect(batches).toBeGreaterThanOrEqual(1);
        follower.close();
        await store.commit("ws", { expectRevision: 4, set: [], events: [event("/after-close")] });
        await new Promise((r) => setTimeout(r, 300));
        expect(seen).toEqual(["2:/a", "3:/b", "4:/c"]);
      });
    });

    describe("importWorkspace", () => {
      /** A workspace with history: two checkpoints, live rows (one a deletion) and five events. */
      async function withHistory(): Promise<WorkspaceDump> {
        const { initial } = await workspace("src");
        await commitRows("src", [{ path: "/a", entry: file("a") }]);
        await store.putTrees([obj("[1]")]);
        const cp = checkpoint("src", "first", { root: sha256("[1]"), parent: initial.id, createdAt: 2_000 });
        await store.moveHead("src", {
          expectRevision: 1,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: true,
          event: { op: "checkpoint", path: "/", oldHash: null, newHash: cp.root, actor: "tester", surface: "test" },
        });
        await commitRows("src", [
          { path: "/d/b", entry: file("b", 7) },
          { path: "/gone", entry: null },
        ]);
        await store.commit("src", { expectRevision: 3, set: [], events: [event("/x"), event("/y")] });
        return dumpOf("src");
      }

      async function dumpOf(name: string): Promise<WorkspaceDump> {
        const ws = await store.getWorkspace(name);
        if (!ws) throw new Error(`no workspace ${name}`);
        return {
          workspace: ws,
          checkpoints: await store.listCheckpoints(name),
          overlay: await store.overlayUnder(name, "/"),
          events: await store.listEvents(name, 0, 1000),
        };
      }

      /** The same workspace under another name, with fresh checkpoint ids (ids are store-wide). */
      function renamed(dump: WorkspaceDump, name: string): WorkspaceDump {
        const ids = new Map(dump.checkpoints.map((cp) => [cp.id, randomUUID()]));
        const id = (old: string | null): string | null => (old === null ? null : (ids.get(old) ?? old));
        return {
          workspace: { ...dump.workspace, name, head: id(dump.workspace.head) as string },
          checkpoints: dump.checkpoints.map((cp) => ({
            ...cp,
            id: id(cp.id) as string,
            parent: id(cp.parent),
            workspace: name,
          })),
          overlay: dump.overlay,
          events: dump.events.map((e) => ({ ...e, workspace: name })),
        };
      }

      it("recreates a workspace exactly: record, checkpoints, overlay and events with their numbers and times", async () => {
        const source = await withHistory();
        expect(source.workspace.revision).toBe(5);
        expect(source.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
        const copy = renamed(source, "copy");
        await store.importWorkspace(copy);
        expect(await dumpOf("copy")).toEqual(copy);
        expect(await store.getCheckpoint("copy", "first")).toEqual(copy.checkpoints.find((cp) => cp.name === "first"));
        expect(await store.overlayUnder("copy", "/d", true)).toEqual([{ path: "/d/b", entry: file("b", 7) }]);
        expect((await store.listWorkspaces()).map((w) => w.name).sort()).toEqual(["copy", "src"]);
        // It goes on from where it was: the next commit is revision 6, its event seq 6.
        expect(await store.commit("copy", { expectRevision: 5, set: [], events: [event("/z")] })).toBe(6);
        expect((await store.listEvents("copy", 5, 10)).map((e) => e.seq)).toEqual([6]);
        expect(await codeOf(store.commit("copy", { expectRevision: 5, set: [], events: [event("/z")] }))).toBe(
          "CONFLICT",
        );
      });

      it("refuses a taken name or checkpoint id with ALREADY_EXISTS and writes nothing", async () => {
        const source = await withHistory();
        expect(await codeOf(store.importWorkspace(source))).toBe("ALREADY_EXISTS");
        const sameIds = { ...source, workspace: { ...source.workspace, name: "other" } };
        sameIds.checkpoints = sameIds.checkpoints.map((cp) => ({ ...cp, workspace: "other" }));
        sameIds.events = sameIds.events.map((e) => ({ ...e, workspace: "other" }));
        expect(await codeOf(store.importWorkspace(sameIds))).toBe("ALREADY_EXISTS");
        expect(await store.getWorkspace("other")).toBeNull();
        expect(await store.listEvents("other", 0, 10)).toEqual([]);
        expect(await store.overlayCount("other")).toBe(0);
        expect(await dumpOf("src")).toEqual(source);
      });

      it("refuses a dump whose head is missing or whose events go backwards, writing nothing", async () => {
        const source = await withHistory();
        const copy = renamed(source, "copy");
        const headless = { ...copy, checkpoints: copy.checkpoints.filter((cp) => cp.id !== copy.workspace.head) };
        expect(await codeOf(store.importWorkspace(headless))).toBe("INVALID_ARGUMENT");
        const backwards = { ...copy, events: [...copy.events].reverse() };
        expect(await codeOf(store.importWorkspace(backwards))).toBe("INVALID_ARGUMENT");
        expect(await store.getWorkspace("copy")).toBeNull();
      });
    });

    describe("garbage collection support", () => {
      it("names every checkpoint root and every live entry's object as a root", async () => {
        const { initial } = await workspace("ws", "[]");
        await workspace("other", "[0]");
        const cp = checkpoint("ws", "first", { root: sha256("[1]"), createdAt: 2_000 });
        await store.putTrees([obj("[1]")]);
        await store.moveHead("ws", {
          expectRevision: 0,
          checkpoint: cp,
          head: cp.id,
          clearOverlay: true,
          event: event("/", "checkpoint"),
        });
        const link: Entry = { ...file("target"), kind: "symlink" };
        await commitRows("ws", [
          { path: "/f", entry: file("f") },
          { path: "/l", entry: link },
          { path: "/d", entry: dir("[2]") },
          { path: "/gone", entry: null },
        ]);
        await commitRows("other", [{ path: "/f", entry: file("f") }]);
        const roots = await store.gcRoots();
        expect(roots.trees).toEqual(new Set([initial.root, sha256("[0]"), sha256("[1]"), sha256("[2]")]));
        expect(roots.blobs).toEqual(new Set([sha256("f"), sha256("target")]));
      });

      it("finds no problem in a consistent store", async () => {
        await workspace("ws");
        await store.putBlobs([obj("f")]);
        await commitRows("ws", [{ path: "/f", entry: file("f") }]);
        expect(await store.checkIntegrity()).toEqual([]);
      });

      it("reports a head whose root tree is gone and live entries whose objects are gone", async () => {
        const { initial } = await workspace("ws", "[9]");
        await store.putBlobs([obj("f")]);
        await store.putTrees([obj("[3]")]);
        await commitRows("ws", [
          { path: "/f", entry: file("f") },
          { path: "/d", entry: dir("[3]") },
        ]);
        expect(await store.checkIntegrity()).toEqual([]);

        await store.deleteObjects("tree", [initial.root]);
        const headProblems = await store.checkIntegrity();
        expect(headProblems.some((p) => p.includes(initial.root))).toBe(true);

        await store.deleteObjects("blob", [sha256("f")]);
        await store.deleteObjects("tree", [sha256("[3]")]);
        const problems = await store.checkIntegrity();
        expect(problems.some((p) => p.includes(sha256("f")))).toBe(true);
        expect(problems.some((p) => p.includes(sha256("[3]")))).toBe(true);
      });
    });

    describe("argument checks (the same on every store)", () => {
      it("refuses a commit without events, a head that is not the initial checkpoint, and a checkpoint of another workspace, changing nothing", async () => {
        const { initial } = await workspace("ws");
        expect(await codeOf(store.commit("ws", { expectRevision: 0, set: [], events: [] }))).toBe("INVALID_ARGUMENT");
        const other = checkpoint("other", "initial", { kind: "initial" });
        const ws = (name: string, head: string): WorkspaceRecord => ({
          name,
          description: "",
          head,
          revision: 0,
          createdAt: 1_000,
          updatedAt: 1_000,
        });
        expect(await codeOf(store.createWorkspace(ws("other", "not-its-id"), other))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(store.createWorkspace(ws("third", other.id), other))).toBe("INVALID_ARGUMENT");
        const foreign = checkpoint("other", "cp");
        const move = store.moveHead("ws", {
          expectRevision: 0,
          checkpoint: foreign,
          head: foreign.id,
          clearOverlay: false,
          event: event("/"),
        });
        expect(await codeOf(move)).toBe("INVALID_ARGUMENT");
        expect((await store.listWorkspaces()).map((w) => w.name)).toEqual(["ws"]);
        expect(await store.getWorkspace("ws")).toMatchObject({ revision: 0, head: initial.id });
        expect(await store.getCheckpointById(foreign.id)).toBeNull();
        expect(await store.getCheckpointById(other.id)).toBeNull();
      });

      it("answers empty questions with empty answers", async () => {
        await workspace("ws");
        expect(await store.overlayGet("ws", [])).toEqual(new Map());
        expect(await store.hasBlobs([])).toEqual(new Set());
        expect(await store.deleteObjects("blob", [])).toBe(0);
        expect(await store.listEvents("ws", 0, 0)).toEqual([]);
        expect(await store.listPathEvents("ws", "/a", 0, 10)).toEqual([]);
        expect(await codeOf(store.listPathEvents("ws", "/a", null, -1))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(store.listPathEvents("ws", "/a", 1.5, 1))).toBe("INVALID_ARGUMENT");
        expect(await codeOf(store.listPathEvents("ws", "a", null, 1))).toBe("INVALID_ARGUMENT");
        await store.putBlobs([]);
        await store.putTrees([]);
        expect(await codeOf(store.readBlobRange(sha256("x"), -1, 1))).toBe("INVALID_ARGUMENT");
      });

      it("refuses every call once closed, with IO_ERROR; closing again is fine", async () => {
        await workspace("ws");
        await store.close();
        await store.close();
        expect(await codeOf(store.getWorkspace("ws"))).toBe("IO_ERROR");
        expect(await codeOf(store.commit("ws", { expectRevision: 0, set: [], events: [event("/")] }))).toBe("IO_ERROR");
        expect(await codeOf(collect(store.blobStream(sha256("x"))))).toBe("IO_ERROR");
      });
    });
  });
}
