// What only the SQLite store promises about large contents: a store written by the previous
// layout (schema 2, every blob inline) opens and keeps working, integrity checks name the
// blob of a missing or corrupt chunk, and repack pages through more rows than one query reads.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { MIGRATIONS } from "../../src/store/sqlite/schema.js";
import { openSqlite } from "./stores.js";

const MiB = 1024 * 1024;

/** Random bytes, so no two chunks are alike (the seed only documents which is which). */
const noise = (size: number, _seed: number): Buffer => randomBytes(size);

async function drain(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

describe("SqliteStore chunk storage", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "afs-chunks-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("opens a store of the previous layout (schema 2), migrates it, and reads and adds contents", async () => {
    const path = join(dir, "afs.db");
    // The previous release's schema: shipped migrations are never edited, so its first two are it.
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    for (const sql of MIGRATIONS.slice(0, 2)) old.exec(sql);
    old.pragma("user_version = 2");
    const big = noise(9 * MiB + 7, 1); // stored inline, as the previous layout stored everything
    const small = Buffer.from("small");
    const put = old.prepare("INSERT INTO blobs (hash, size, created_at, data) VALUES (?, ?, ?, ?)");
    put.run(sha256(big), big.byteLength, 1, big);
    put.run(sha256(small), small.byteLength, 1, small);
    old.close();

    const store = openSqlite(path);
    try {
      expect((await store.getBlob(sha256(big)))?.equals(big)).toBe(true);
      expect((await store.getBlob(sha256(small)))?.toString()).toBe("small");
      expect(await store.blobSize(sha256(big))).toBe(big.byteLength);
      const at = 4 * MiB - 10;
      expect((await store.readBlobRange(sha256(big), at, 20))?.equals(big.subarray(at, at + 20))).toBe(true);
      expect((await drain(store.blobStream(sha256(big)))).equals(big)).toBe(true);
      const fresh = noise(9 * MiB, 2);
      const { hash } = await store.putBlobStream([fresh]);
      expect((await store.getBlob(hash))?.equals(fresh)).toBe(true);
      expect(await store.checkIntegrity()).toEqual([]);
    } finally {
      await store.close();
    }
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(raw.prepare("SELECT count(*) FROM chunks").pluck().get()).toBe(3);
    } finally {
      raw.close();
    }
  });

  it("names the blob of a missing chunk and of a corrupt chunk", async () => {
    const path = join(dir, "afs.db");
    const store = openSqlite(path);
    const data = noise(3 * store.chunkBytes, 3);
    const { hash } = await store.putBlobStream([data]);
    const chunkHash = (i: number): string => sha256(data.subarray(i * store.chunkBytes, (i + 1) * store.chunkBytes));
    const raw = new Database(path);
    try {
      raw.prepare("UPDATE chunks SET data = ? WHERE hash = ?").run(Buffer.alloc(store.chunkBytes), chunkHash(1));
      raw.prepare("DELETE FROM chunks WHERE hash = ?").run(chunkHash(2));
    } finally {
      raw.close();
    }
    try {
      const problems = await store.checkIntegrity();
      expect(problems).toContainEqual(`blob ${hash}: chunk ${chunkHash(2)} at byte ${2 * store.chunkBytes} is missing`);
      expect(problems).toContainEqual(
        `chunk ${chunkHash(1)} (in blob ${hash} at byte ${store.chunkBytes}) does not match its content hash`,
      );
      const err = await drain(store.blobStream(hash)).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "IO_ERROR", message: expect.stringContaining(chunkHash(2)) });
    } finally {
      await store.close();
    }
  });

  it("keeps compressible contents deflated, incompressible ones raw, and reads both back exactly", async () => {
    const path = join(dir, "afs.db");
    const store = openSqlite(path);
    const text = Buffer.from("export const answer = 42;\n".repeat(400_000)); // ~10 MiB, chunked
    const small = Buffer.from("hello, compressible world. ".repeat(100));
    const random = noise(5000, 4);
    try {
      const { hash } = await store.putBlobStream([text]);
      await store.putBlobs([small, random].map((data) => ({ hash: sha256(data), data })));
      expect((await store.getBlob(hash))?.equals(text)).toBe(true);
      expect((await store.readBlobRange(hash, 4 * MiB - 3, 10))?.equals(text.subarray(4 * MiB - 3, 4 * MiB + 7))).toBe(
        true,
      );
      expect((await store.getBlob(sha256(small)))?.equals(small)).toBe(true);
      expect((await store.readBlobRange(sha256(small), 5, 20))?.equals(small.subarray(5, 25))).toBe(true);
      expect((await store.getBlob(sha256(random)))?.equals(random)).toBe(true);
      expect(await store.checkIntegrity()).toEqual([]);
    } finally {
      await store.close();
    }
    const raw = new Database(path, { readonly: true });
    try {
      const stored = (h: string) => raw.prepare("SELECT length(data) FROM blobs WHERE hash = ?").pluck().get(h);
      expect(stored(sha256(small))).toBeLessThan(small.byteLength / 2);
      expect(stored(sha256(random))).toBe(random.byteLength);
      const chunkBytes = raw.prepare("SELECT sum(length(data)) FROM chunks").pluck().get() as number;
      expect(chunkBytes).toBeLessThan(text.byteLength / 10);
    } finally {
      raw.close();
    }
  });

  it("repacks old values past the first page of blob keys and on into the chunk table", async () => {
    const path = join(dir, "afs.db");
    const store = openSqlite(path);
    // More blobs than one page of keys (256), each just large enough to be stored seekable.
    const blobs = Array.from({ length: 300 }, (_, i) => Buffer.from(`${i}: export const x = 1;\n`.repeat(3000)));
    const chunked = Buffer.from("const chunked = true;\n".repeat(250_000));
    const legacy = Buffer.from("const legacy = true;\n".repeat(250_000));
    try {
      await store.putBlobs(blobs.map((data) => ({ hash: sha256(data), data })));
      await store.putBlobStream([chunked]);
      const raw = new Database(path);
      try {
        const old = (table: string, content: Buffer) =>
          raw.prepare(`UPDATE ${table} SET data = ? WHERE hash = ?`).run(deflateRawSync(content), sha256(content));
        for (const b of blobs) old("blobs", b);
        old("chunks", chunked.subarray(0, store.chunkBytes));
        // A blob stored whole before chunking existed: left for afs migrate, memory stays at a chunk.
        raw
          .prepare("INSERT INTO blobs (hash, size, created_at, data) VALUES (?, ?, 1, ?)")
          .run(sha256(legacy), legacy.byteLength, deflateRawSync(legacy));
      } finally {
        raw.close();
      }
      expect((await store.repack()).values).toBe(blobs.length + 1);
      expect((await store.getBlob(sha256(blobs[299] as Buffer)))?.equals(blobs[299] as Buffer)).toBe(true);
      expect((await store.getBlob(sha256(chunked)))?.equals(chunked)).toBe(true);
      expect((await store.getBlob(sha256(legacy)))?.equals(legacy)).toBe(true);
      expect((await store.repack()).values).toBe(0);
    } finally {
      await store.close();
    }
  });
});
