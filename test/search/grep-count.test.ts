// grep -c and -l of a plain literal, counted from the texts' bytes read in batches
// (TextIndex.countLines, Store.eachSmallBlob): the same answers as a line-by-line scan, in a new
// process (nothing cached), over CRLF, a BOM, binary content, texts of several blocks and a literal
// across a block boundary, with max_count, limit and cursors.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { type GrepArgs, grep } from "../../src/ops/index.js";
import { checkedStore } from "../../src/store/checked-store.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import type { Volume } from "../../src/volume/volume.js";
import { Afs } from "../../src/workspace/afs.js";
import { openRedis, openSqlite, redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { scan } from "../helpers/grep-reference.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempDir } from "../helpers/tmp.js";

const LIT = "needle";

/** Lines of filler that make a text of several 16 KiB blocks, with the literal here and there. */
function blocks(bytes: number, eol: string): string {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const l = i % 37 === 3 ? `x ${LIT} y ${LIT}` : `filler line ${i} with nothing in it`;
    lines.push(l);
    n += l.length + eol.length;
  }
  return lines.join(eol) + eol;
}

const FILES: Record<string, Buffer> = {
  "/lf.txt": Buffer.from(`a ${LIT}\nb\n${LIT}${LIT}\n`),
  "/crlf.txt": Buffer.from(`${LIT}\r\nno\r\nx ${LIT}\r\n`),
  "/bom.txt": Buffer.from(`\uFEFF${LIT} first\nsecond ${LIT}`),
  "/binary.bin": Buffer.concat([Buffer.from(`${LIT}\n`), Buffer.from([0, 1, 2]), Buffer.from(`${LIT}\n`)]),
  "/empty.txt": Buffer.alloc(0),
  "/none.txt": Buffer.from("nothing here\n".repeat(50)),
  "/utf8.txt": Buffer.from(`café ${LIT} é\n`.repeat(30)),
  // Two to three blocks, read whole by the batch (under 64 KiB), LF and CRLF.
  "/two-blocks.txt": Buffer.from(blocks(40_000, "\n")),
  "/two-blocks-crlf.txt": Buffer.from(blocks(50_000, "\r\n")),
  // Many blocks: its candidate blocks are read alone (TextIndex.runs), not counted by the batch.
  "/many-blocks.txt": Buffer.from(blocks(300_000, "\n")),
};

// The literal across the boundary of the first 16 KiB block: the line holding it is in one block.
{
  const head = "y".repeat(16 * 1024 - 3);
  FILES["/straddle.txt"] = Buffer.from(`${head}${LIT} tail\n${"z\n".repeat(20_000)}${LIT}\n`);
}
// The same contents under several paths count at each.
FILES["/dir/copy-of-lf.txt"] = FILES["/lf.txt"] as Buffer;
for (let i = 0; i < 300; i++) FILES[`/many/f${i}.txt`] = Buffer.from(`${i % 3 === 0 ? LIT : "hay"} ${i}\n`);

describe("grep -c / -l of a plain literal, counted from bytes", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir("afs-home-"));
    const first = await Afs.open({ home: dir, actor: "test" });
    await first.workspaces.create("w");
    const v = await first.workspaces.volume("w");
    for (const [path, data] of Object.entries(FILES)) await v.writeFile(path, data, { op: "write" });
    await first.checkpoints.create("w", { name: "one" });
    // Indexed, as a search or the builder leaves a home.
    await grep(v, { pattern: "filler" }, indexesOf(first));
    await first.close();
  });
  afterAll(() => cleanup());

  /** A new process's engine (nothing cached): the cold CLI's case. */
  async function fresh<T>(fn: (afs: Afs, volume: Volume) => Promise<T>): Promise<T> {
    const afs = await Afs.open({ home: dir, actor: "test" });
    try {
      return await fn(afs, await afs.workspaces.volume("w"));
    } finally {
      await afs.close();
    }
  }

  it("answers -c and -l as a scan does, the small texts counted by the index from their bytes", async () => {
    await fresh(async (afs, volume) => {
      const index = afs.indexes.text;
      const counted = vi.spyOn(index, "countLines");
      for (const a of [
        { pattern: LIT, count: true },
        { pattern: LIT, files_with_matches: true },
        { pattern: LIT, count: true, max_count: 1 },
        { pattern: `${LIT} tail`, count: true },
        { pattern: "é", count: true },
        { pattern: `\uFEFF${LIT}`, count: true },
      ] as GrepArgs[]) {
        expect(await grep(volume, a, indexesOf(afs)), JSON.stringify(a)).toEqual(await scan(volume, a));
      }
      expect(counted).toHaveBeenCalled();
      // What the first search counted: the small texts (the many-block one is left to the block
      // reader until a later search has it cached whole, binary content to no one).
      const answered = new Set<string>((await counted.mock.results[0]?.value)?.keys());
      expect(answered.has(sha256(FILES["/lf.txt"] as Buffer))).toBe(true);
      expect(answered.has(sha256(FILES["/two-blocks-crlf.txt"] as Buffer))).toBe(true);
      expect(answered.has(sha256(FILES["/straddle.txt"] as Buffer))).toBe(true);
      expect(answered.has(sha256(FILES["/many-blocks.txt"] as Buffer))).toBe(false);
      expect(answered.has(sha256(FILES["/binary.bin"] as Buffer))).toBe(false);
    });
  });

  it("pages with limit and cursor as a scan does", async () => {
    await fresh(async (afs, volume) => {
      const expected = (await scan(volume, { pattern: LIT, count: true })) as { counts: unknown[] };
      const got: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1000; page++) {
        const r = await grep(volume, { pattern: LIT, count: true, limit: 7, cursor }, indexesOf(afs));
        if (r.mode !== "counts") throw new Error(r.mode);
        got.push(...r.counts);
        cursor = r.cursor;
        if (!cursor) break;
      }
      expect(got).toEqual(expected.counts);
    });
  });

  it("counts a live edit over the checkpoint, and texts the cache holds, the same", async () => {
    await fresh(async (afs, volume) => {
      await volume.writeFile("/lf.txt", Buffer.from(`${LIT}\n${LIT}\n${LIT}\n`), { op: "write" });
      await volume.writeFile("/new.txt", Buffer.from(`new ${LIT}\r\n`), { op: "write" });
      const a: GrepArgs = { pattern: LIT, count: true };
      // Twice: the second time from texts the first one cached.
      expect(await grep(volume, a, indexesOf(afs))).toEqual(await scan(volume, a));
      expect(await grep(volume, a, indexesOf(afs))).toEqual(await scan(volume, a));
    });
  });
});

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`Store.eachSmallBlob on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;

    it("gives every stored blob up to the size asked, as getBlob reads it, once", async () => {
      const { dir, cleanup } = await tempDir("afs-store-");
      const s = redis ? await openRedis(`${redis().url}?prefix=each${process.pid}`) : openSqlite(`${dir}/afs.db`);
      try {
        const datas = [
          Buffer.alloc(0),
          Buffer.from("tiny"),
          Buffer.from("compressible text\n".repeat(500)),
          Buffer.from(blocks(100_000, "\n")),
          // Chunked (over 4 MiB).
          Buffer.from(blocks(5 * 1024 * 1024, "\n")),
        ];
        await s.putBlobs(datas.map((data) => ({ hash: sha256(data), data })));
        const hashes = [...datas.map((d) => sha256(d)), sha256(Buffer.from("not stored"))];
        for (const max of [10, 64 * 1024, 8 * 1024 * 1024]) {
          const seen = new Map<string, Buffer>();
          await s.eachSmallBlob(hashes, max, (hash, bytes) => {
            expect(seen.has(hash)).toBe(false);
            seen.set(hash, Buffer.from(bytes));
          });
          const expected = datas.filter((d) => d.byteLength <= max);
          expect([...seen.keys()].sort()).toEqual(expected.map((d) => sha256(d)).sort());
          for (const d of expected) expect(seen.get(sha256(d))?.equals(d)).toBe(true);
        }
      } finally {
        await s.close();
        await cleanup();
      }
    });
  });
}

describe("Store.eachSmallBlob over many batches on SQLite", () => {
  it("gives the bytes getBlob gives across batches (one reused inflater), and a corrupt value as IO_ERROR", async () => {
    const { dir, cleanup } = await tempDir("afs-store-");
    const file = `${dir}/afs.db`;
    try {
      const datas: Buffer[] = [];
      for (let i = 0; i < 3000; i++) datas.push(Buffer.from(`file ${i} ${"text ".repeat(i % 400)}\n`));
      datas.push(Buffer.from(blocks(5 * 1024 * 1024, "\n")));
      const hashes = [...datas.map((d) => sha256(d)), sha256(Buffer.from("absent"))];
      const read = async () => {
        const store = checkedStore(SqliteStore.open(file));
        try {
          const seen = new Map<string, string>();
          await store.eachSmallBlob(hashes, 8 * 1024 * 1024, (hash, bytes) => {
            expect(seen.has(hash)).toBe(false);
            seen.set(hash, sha256(bytes));
          });
          return seen;
        } finally {
          await store.close();
        }
      };
      const store = checkedStore(SqliteStore.open(file));
      await store.putBlobs(datas.map((data) => ({ hash: sha256(data), data })));
      await store.close();
      const seen = await read();
      expect(seen.size).toBe(datas.length);
      for (const [hash, digest] of seen) expect(digest).toBe(hash);

      // A value that does not inflate: IO_ERROR, never wrong bytes.
      const db = new Database(file);
      db.prepare("UPDATE blobs SET data = zeroblob(100) WHERE hash = ?").run(sha256(datas[2000] as Buffer));
      db.close();
      await expect(read()).rejects.toMatchObject({ code: "IO_ERROR" });
    } finally {
      await cleanup();
    }
  }, 60_000);
});
