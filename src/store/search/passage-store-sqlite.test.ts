import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { IndexDb } from "../index-db.js";
import { SqlitePassageStore } from "./passage-store-sqlite.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const blob = (n: number) => n.toString(16).padStart(64, "0");
const record = (n: number, terms: string) => ({
  blob: blob(n),
  name: "a.md",
  passages: [{ seq: 0, start_line: 1, end_line: 1, hash: blob(1000 + n), terms }],
});
const q = { terms: ["retry"], phrases: [], excludes: [] };

describe("SqlitePassageStore", () => {
  it("keeps ranking after drop rebuilds its tables and after prune", async () => {
    const dir = mkdtempSync(join(tmpdir(), "afs-chunks-"));
    dirs.push(dir);
    const db = IndexDb.open(join(dir, "index.db"));
    const store = new SqlitePassageStore(() => db);
    await store.put("auto", [record(1, "retry backoff"), record(2, "other words")]);
    expect((await store.keyword("auto", q, 10)).map((h) => h.passage.blob)).toEqual([blob(1)]);
    expect((await store.keywordWithin("auto", q, [blob(1), blob(2)], 10)).map((h) => h.passage.blob)).toEqual([
      blob(1),
    ]);

    const before = await store.generation();
    await store.drop();
    expect(await store.generation()).toBeGreaterThan(before);
    expect(await store.keyword("auto", q, 10)).toEqual([]);
    await store.put("auto", [record(3, "retry again"), record(4, "retry once more")]);
    expect((await store.keyword("auto", q, 10)).map((h) => h.passage.blob).sort()).toEqual([blob(3), blob(4)]);

    expect(await store.prune((h) => h !== blob(3))).toEqual({ blobs: 1, chunks: 1 });
    expect((await store.keyword("auto", q, 10)).map((h) => h.passage.blob)).toEqual([blob(4)]);
    expect(await store.stats("auto")).toEqual({ blobs: 1, chunks: 1 });
    db.close();
  });
});
