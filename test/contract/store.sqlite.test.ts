// The Store contract against SqliteStore on real temp files, plus what only SQLite promises:
// durability across reopen, two connections sharing one file, schema versioning and store URLs.
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { sha256 } from "../../src/core/hash.js";
import { driverOf } from "../../src/store/checked-store.js";
import { openStore } from "../../src/store/open.js";
import { MIGRATIONS } from "../../src/store/sqlite/schema.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import type { CheckpointRecord, Store, WorkspaceRecord } from "../../src/store/store.js";
import { storeChunksContract } from "./store-chunks-contract.js";
import { storeContract } from "./store-contract.js";
import { storeRepackContract } from "./store-repack-contract.js";
import { openSqlite, sqliteFactory, sqliteRaw, storeEnabled } from "./stores.js";

describe.runIf(storeEnabled("sqlite"))("sqlite", () => {
  storeContract("sqlite", sqliteFactory);
  storeChunksContract("sqlite", sqliteFactory);
  storeRepackContract("sqlite", sqliteFactory, sqliteRaw);
});

const EMPTY_ROOT = sha256("[]");

async function seed(store: Store, name = "ws"): Promise<{ ws: WorkspaceRecord; initial: CheckpointRecord }> {
  await store.putTrees([{ hash: EMPTY_ROOT, data: Buffer.from("[]") }]);
  const initial: CheckpointRecord = {
    id: randomUUID(),
    workspace: name,
    name: "initial",
    root: EMPTY_ROOT,
    parent: null,
    createdAt: 1,
    actor: "tester",
    kind: "initial",
    description: "",
  };
  const ws: WorkspaceRecord = { name, description: "", head: initial.id, revision: 0, createdAt: 1, updatedAt: 1 };
  await store.createWorkspace(ws, initial);
  return { ws, initial };
}

const fileEntry = (s: string) => ({ kind: "file" as const, hash: sha256(s), size: s.length, mode: 0o644, mtime: 5 });
const ev = (path: string) => ({
  op: "write",
  path,
  oldHash: null,
  newHash: sha256(path),
  actor: "tester",
  surface: "test",
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return e instanceof AfsError ? e.code : `not an AfsError: ${String(e)}`;
  }
  return "resolved";
}

describe("SqliteStore", () => {
  let dir: string;
  const open: Store[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "afs-sqlite-"));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  const track = <S extends Store>(s: S): S => {
    open.push(s);
    return s;
  };

  it("creates its file and parent directories, in WAL mode at the current schema version", async () => {
    const path = join(dir, "deep", "er", "afs.db");
    const store = track(openSqlite(path));
    expect(store.url).toBe(`sqlite:${path}`);
    expect((await stat(path)).isFile()).toBe(true);
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    } finally {
      raw.close();
    }
  });

  it("keeps everything across a reopen", async () => {
    const path = join(dir, "afs.db");
    const first = openSqlite(path);
    const { ws, initial } = await seed(first);
    await first.putBlobs([{ hash: sha256("x"), data: Buffer.from("x") }]);
    await first.commit("ws", { expectRevision: 0, set: [{ path: "/x", entry: fileEntry("x") }], events: [ev("/x")] });
    await first.close();
    await first.close();
    expect(await codeOf(first.getWorkspace("ws"))).toBe("IO_ERROR");

    const again = track(openSqlite(path));
    expect(await again.getWorkspace("ws")).toMatchObject({ ...ws, revision: 1, updatedAt: expect.any(Number) });
    expect(await again.getCheckpointById(initial.id)).toEqual(initial);
    expect((await again.getBlob(sha256("x")))?.toString()).toBe("x");
    expect(await again.overlayUnder("ws", "/")).toEqual([{ path: "/x", entry: fileEntry("x") }]);
    expect((await again.listEvents("ws", 0, 10)).map((e) => e.seq)).toEqual([1]);
    expect(await again.checkIntegrity()).toEqual([]);
  });

  it("shares one file between two connections, with the revision check holding across them", async () => {
    const path = join(dir, "afs.db");
    const a = track(openSqlite(path));
    const b = track(openSqlite(path));
    await seed(a);
    expect(await b.getWorkspace("ws")).not.toBeNull();

    const rA = await a.commit("ws", {
      expectRevision: 0,
      set: [{ path: "/a", entry: fileEntry("a") }],
      events: [ev("/a")],
    });
    expect(rA).toBe(1);
    expect(await b.overlayGet("ws", ["/a"])).toEqual(new Map([["/a", fileEntry("a")]]));
    const stale = b.commit("ws", {
      expectRevision: 0,
      set: [{ path: "/b", entry: fileEntry("b") }],
      events: [ev("/b")],
    });
    expect(await codeOf(stale)).toBe("CONFLICT");
    expect(await b.commit("ws", { expectRevision: 1, set: [], events: [ev("/b")] })).toBe(2);
    expect((await a.getWorkspace("ws"))?.revision).toBe(2);
    expect((await a.listEvents("ws", 0, 10)).map((e) => e.path)).toEqual(["/a", "/b"]);
  });

  it("fails with TIMEOUT when another connection holds the write lock too long", async () => {
    const path = join(dir, "afs.db");
    const store = track(openSqlite(path, { busyTimeoutMs: 50 }));
    await seed(store);
    const raw = new Database(path);
    try {
      raw.exec("BEGIN IMMEDIATE");
      const p = store.commit("ws", { expectRevision: 0, set: [], events: [ev("/")] });
      expect(await codeOf(p)).toBe("TIMEOUT");
      raw.exec("ROLLBACK");
      expect(await store.commit("ws", { expectRevision: 0, set: [], events: [ev("/")] })).toBe(1);
    } finally {
      raw.close();
    }
  });

  it("refuses to move head to a checkpoint of another workspace or one that does not exist", async () => {
    const store = track(openSqlite(join(dir, "afs.db")));
    await seed(store, "ws");
    const { initial: foreign } = await seed(store, "other");
    const move = (head: string) =>
      store.moveHead("ws", { expectRevision: 0, checkpoint: null, head, clearOverlay: false, event: ev("/") });
    expect(await codeOf(move(foreign.id))).toBe("NOT_FOUND");
    expect(await codeOf(move("no-such-id"))).toBe("NOT_FOUND");
    expect((await store.getWorkspace("ws"))?.revision).toBe(0);
  });

  it("reports a head that names a missing checkpoint", async () => {
    const path = join(dir, "afs.db");
    const store = track(openSqlite(path));
    const { initial } = await seed(store);
    const raw = new Database(path);
    try {
      raw.pragma("foreign_keys = OFF");
      raw.prepare("DELETE FROM checkpoints WHERE id = ?").run(initial.id);
    } finally {
      raw.close();
    }
    const problems = await store.checkIntegrity();
    expect(problems.some((p) => p.includes("foreign_key_check"))).toBe(true);
    expect(problems).toContain(`workspace ws: head checkpoint ${initial.id} is missing`);
  });

  it("explains files it cannot open, naming the path", async () => {
    const notDb = join(dir, "garbage.db");
    await writeFile(notDb, "this is not a database, just some text that is long enough to be a header".repeat(20));
    const cases = [notDb, dir, join(notDb, "below-a-file.db")];
    for (const path of cases) {
      let error: unknown;
      try {
        track(openSqlite(path));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AfsError);
      expect((error as AfsError).code).toBe("IO_ERROR");
      expect((error as AfsError).message).toContain(path);
    }
  });

  it("upgrades a store made by the layout before templates (version 3), keeping its workspaces", async () => {
    const path = join(dir, "v3.db");
    const raw = new Database(path);
    for (const sql of MIGRATIONS.slice(0, 3)) raw.exec(sql);
    raw.pragma("user_version = 3");
    raw.exec(`INSERT INTO trees (hash, size, created_at, data) VALUES ('${EMPTY_ROOT}', 2, 1, x'5b5d')`);
    // One transaction: a workspace's head refers to its checkpoint, checked at commit.
    raw.transaction(() => {
      raw.exec(
        "INSERT INTO workspaces (name, description, head, revision, created_at, updated_at)" +
          " VALUES ('old', 'kept', 'cp1', 0, 1, 1)",
      );
      raw.exec(
        "INSERT INTO checkpoints (id, workspace, name, root, parent, created_at, actor, kind, description)" +
          ` VALUES ('cp1', 'old', 'initial', '${EMPTY_ROOT}', NULL, 1, 'tester', 'initial', '')`,
      );
      raw.exec(
        "INSERT INTO events (workspace, seq, op, path, old_hash, new_hash, actor, time)" +
          " VALUES ('old', 1, 'write', '/a', NULL, NULL, 'tester', 5)",
      );
    })();
    raw.close();

    const store = track(openSqlite(path));
    expect(await store.getWorkspace("old")).toMatchObject({ name: "old", description: "kept", head: "cp1" });
    // Events from before surfaces were recorded read as unknown.
    expect(await store.listEvents("old", 0, 10)).toMatchObject([{ seq: 1, actor: "tester", surface: "unknown" }]);
    expect(await store.listTemplates()).toEqual([]);
    await store.setTemplate("old", "starter");
    expect(await store.listTemplates()).toEqual([{ slug: "starter", workspace: "old" }]);
    await store.close();
    const check = new Database(path, { readonly: true });
    try {
      expect(check.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    } finally {
      check.close();
    }
    const again = track(openSqlite(path));
    expect(await again.listTemplates()).toEqual([{ slug: "starter", workspace: "old" }]);
    expect(await again.checkIntegrity()).toEqual([]);
  });

  it("refuses a schema newer than it understands", async () => {
    const path = join(dir, "future.db");
    track(openSqlite(path));
    const raw = new Database(path);
    raw.pragma("user_version = 99");
    raw.close();
    expect(() => openSqlite(path)).toThrow(/schema version 99/);
  });

  describe("openStore", () => {
    const urlsFor = (path: string) => [
      `sqlite:${path}`,
      `sqlite://${path}`,
      `sqlite://localhost${path}`,
      pathToFileURL(path).href,
      `file:${path}`,
      path,
      relative(process.cwd(), path),
      `sqlite:${relative(process.cwd(), path)}`,
    ];

    it("opens SQLite from sqlite:, file: and bare paths, absolute or relative", async () => {
      const path = join(dir, "sub dir", "afs.db");
      await mkdir(join(dir, "sub dir"));
      for (const url of urlsFor(path)) {
        const store = await openStore(url);
        try {
          expect(driverOf(store), url).toBeInstanceOf(SqliteStore);
          expect(store.url, url).toBe(`sqlite:${path}`);
        } finally {
          await store.close();
        }
      }
    });

    it("refuses unknown or empty URLs, saying what works", async () => {
      const refuse = async (url: string, pattern: RegExp) => {
        const error = await openStore(url).then(
          (s) => s.close().then(() => null),
          (e: unknown) => e,
        );
        expect(error, url).toBeInstanceOf(AfsError);
        expect((error as AfsError).code, url).toBe("INVALID_ARGUMENT");
        expect((error as AfsError).message, url).toMatch(pattern);
      };
      await refuse("postgres://db/afs", /unknown scheme.*sqlite:/);
      await refuse("", /empty/);
      await refuse("sqlite:", /no file path/);
      await refuse("sqlite://db.example/afs.db", /host/);
      await refuse("file://db.example/afs.db", /file URL/);
    });
  });
});
