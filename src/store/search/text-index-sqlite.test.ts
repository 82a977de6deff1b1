import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tempAfs } from "../../../test/helpers/tmp.js";
import { type Hash, sha256 } from "../../core/hash.js";
import { BANDS } from "../../search/block-filters.js";
import type { LiteralQuery } from "../../search/text-index.js";
import { BLOOM_BYTES } from "../../search/trigrams.js";
import type { Afs } from "../../workspace/afs.js";
import { internalsOf } from "../../workspace/engine/internals.js";
import { SqliteTextIndex } from "./text-index-sqlite.js";

let t: { afs: Afs; cleanup: () => Promise<void> };
beforeEach(async () => {
  t = await tempAfs();
});
afterEach(() => t.cleanup());

describe("SqliteTextIndex", () => {
  it("writes a segment of posting lists per indexing transaction, and merges eight into one that answers as they did", async () => {
    const store = internalsOf(t.afs).store;
    const index = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, store);
    const db = internalsOf(t.afs).searchDb.db;
    const levels = () => db.prepare("SELECT level FROM text_segments ORDER BY first").pluck().all();
    const lit = (folded: string): LiteralQuery => ({ op: "lit", folded });
    // Nine indexing calls of three texts each: one rare word per text, one word in every text,
    // one in the texts of even calls, and a wide (non-ASCII) word in the first text of each.
    const calls = Array.from({ length: 9 }, (_, c) =>
      Array.from({ length: 3 }, (_, i) =>
        Buffer.from(
          `call ${c} text ${i}: rare${c}x${i}q common${c % 2 === 0 ? " evenword" : ""}${i === 0 ? " 日本語の文" : ""}\n`,
        ),
      ),
    );
    const hashes: Hash[] = [];
    for (const [c, texts] of calls.entries()) {
      await store.putBlobs(texts.map((data) => ({ hash: sha256(data), data })));
      hashes.push(...texts.map((d) => sha256(d)));
      expect((await index.build(texts.map((d) => sha256(d)))).indexed).toBe(3);
      // Eight segments of level 0 became one of level 1 when the eighth came.
      expect(levels()).toEqual(c < 7 ? Array(c + 1).fill(0) : c === 7 ? [1] : [1, 0]);
    }
    const named = async (q: LiteralQuery) => [...(await index.candidates(hashes, q)).keys()].sort();
    for (const [c, texts] of calls.entries()) {
      for (const i of [0, 1, 2]) expect(await named(lit(`rare${c}x${i}q`))).toEqual([sha256(texts[i] as Buffer)]);
    }
    expect(await named(lit("common"))).toEqual([...hashes].sort());
    const even = calls.flatMap((texts, c) => (c % 2 === 0 ? texts.map((d) => sha256(d)) : []));
    expect(await named(lit("evenword"))).toEqual(even.sort());
    expect(await named(lit("日本語"))).toEqual(calls.map((texts) => sha256(texts[0] as Buffer)).sort());
    const either: LiteralQuery = { op: "or", of: [lit("rare0x1q"), lit("rare8x2q")] };
    expect(await named(either)).toEqual([sha256(calls[0]?.[1] as Buffer), sha256(calls[8]?.[2] as Buffer)].sort());
    // A new process (a new index object) reads the same lists.
    const fresh = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, store);
    expect([...(await fresh.candidates(hashes, lit("rare3x1q"))).keys()]).toEqual([sha256(calls[3]?.[1] as Buffer)]);
  });

  it("writes a batch of more postings than a part holds as several segments, each text still found", async () => {
    const store = internalsOf(t.afs).store;
    const index = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, store);
    const db = internalsOf(t.afs).searchDb.db;
    // ~1,000 texts of ~3,000 random base-36 characters: ~2.9M postings in one transaction (3 MB).
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const texts = Array.from({ length: 1000 }, (_, i) =>
      Buffer.from(
        `${Array.from({ length: 3000 }, () => ((random() >>> 16) % 36).toString(36)).join("")}\nmark_${i}_end\n`,
      ),
    );
    await store.putBlobs(texts.map((data) => ({ hash: sha256(data), data })));
    const hashes = texts.map((d) => sha256(d));
    expect((await index.build(hashes)).indexed).toBe(texts.length);
    const parts = db.prepare("SELECT first FROM text_segments ORDER BY first").pluck().all() as number[];
    expect(parts.length).toBeGreaterThan(1);
    expect(new Set(parts).size).toBe(parts.length);
    for (const i of [0, 499, 500, 998, 999]) {
      const got = [...(await index.candidates(hashes, { op: "lit", folded: `mark_${i}_end` })).keys()];
      expect(got).toEqual([hashes[i]]);
    }
  });

  it("classifies a blob too large to index by its first bytes, never reading it whole", async () => {
    const text = Buffer.from("line of text\n".repeat(200_000)); // 2.6 MB
    const binary = Buffer.concat([Buffer.from([0, 1, 2]), Buffer.alloc(3_000_000, 7)]);
    await internalsOf(t.afs).store.putBlobs([
      { hash: sha256(text), data: text },
      { hash: sha256(binary), data: binary },
    ]);
    const wholeReads: string[] = [];
    // The store as the index sees it: any whole read of these blobs is recorded.
    const store = new Proxy(internalsOf(t.afs).store, {
      get(target, key, receiver) {
        if (key === "getBlob") {
          return (hash: string) => {
            wholeReads.push(hash);
            return target.getBlob(hash as never);
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const index = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, store, { maxIndexBytes: 1024 * 1024 });
    const built = await index.build([sha256(text), sha256(binary)]);
    expect(built).toMatchObject({ indexed: 2, skipped: 2 });
    expect(await index.status()).toMatchObject({ texts: 0, binary: 1, large: 1 });
    expect(wholeReads).toEqual([]);

    // Under the limit: a binary blob is still told by its first bytes, and only the text is read whole.
    const roomy = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, store, { maxIndexBytes: 64 * 1024 * 1024 });
    await roomy.clear();
    expect(await roomy.build([sha256(text), sha256(binary)])).toMatchObject({ indexed: 2, skipped: 1 });
    expect(await roomy.status()).toMatchObject({ texts: 1, binary: 1, large: 0 });
    expect(wholeReads).toEqual([sha256(text)]);
  });

  describe("scope markers", () => {
    const lit = (folded: string): LiteralQuery => ({ op: "lit", folded });
    const put = async (...texts: (string | Buffer)[]): Promise<Hash[]> => {
      const blobs = texts.map((x) => (typeof x === "string" ? Buffer.from(x) : x));
      await internalsOf(t.afs).store.putBlobs(blobs.map((data) => ({ hash: sha256(data), data })));
      return blobs.map((data) => sha256(data));
    };
    const fresh = (maxIndexBytes?: number) =>
      new SqliteTextIndex(() => internalsOf(t.afs).searchDb, internalsOf(t.afs).store, { maxIndexBytes });
    const markers = () => internalsOf(t.afs).searchDb.db.prepare("SELECT count(*) FROM text_scopes").pluck().get();
    /** Whether a search looked every hash up (rather than trusting a marker). */
    const lookups = (index: SqliteTextIndex) => vi.spyOn(index as unknown as { lookup: () => Hash[] }, "lookup");

    it("lets a new process trust a wholly indexed scope, and answer from the rows the postings name", async () => {
      const big = `${"filler line of text\n".repeat(4000)}the needle here\n${"more filler\n".repeat(4000)}`;
      const large = `needle in a blob too large to index\n${"x".repeat(300_000)}`;
      const hashes = await put("a needle\n", "no match\n", big, large, Buffer.from([110, 0, 1]));
      const first = fresh(256 * 1024);
      expect([...(await first.candidates(hashes, lit("needle"))).keys()].sort()).toEqual(
        [hashes[0], hashes[2], hashes[3]].sort(),
      );
      expect(markers()).toBe(1);

      const second = fresh(256 * 1024);
      const looked = lookups(second);
      const got = await second.candidates([...hashes], lit("needle"));
      expect(looked).not.toHaveBeenCalled();
      expect([...got.keys()].sort()).toEqual([hashes[0], hashes[2], hashes[3]].sort());
      // Only the large text's block holding the literal, as the looked-up scope says.
      expect(got.get(hashes[2] as Hash)).toEqual(
        (await first.candidates(hashes, lit("needle"))).get(hashes[2] as Hash),
      );
      expect(got.get(hashes[2] as Hash)?.length).toBe(1);
      expect(got.get(hashes[3] as Hash)).toBeNull();
      // What the search reads next knows the candidates as indexed texts.
      expect(await second.view(hashes[0] as Hash)).toBe("a needle\n");
      // A search needing every text looks the scope up, and leaves the marker as it was.
      const markerIds = () => internalsOf(t.afs).searchDb.db.prepare("SELECT id FROM text_scopes").pluck().all();
      const before = markerIds();
      expect((await fresh(256 * 1024).candidates([...hashes], { op: "all" })).size).toBe(4);
      expect(markerIds()).toEqual(before);
      // A row of another scope is never a member.
      const other = await put("another needle\n");
      await fresh(256 * 1024).candidates(other, lit("needle"));
      expect([...(await fresh(256 * 1024).candidates([...hashes], lit("needle"))).keys()]).not.toContain(other[0]);
    });

    it("indexes a blob added since: a changed scope has no marker", async () => {
      const hashes = await put("alpha\n", "beta\n");
      await fresh().candidates(hashes, lit("alpha"));
      const added = [...hashes, ...(await put("gamma alpha\n"))];
      const index = fresh();
      expect([...(await index.candidates(added, lit("alpha"))).keys()].sort()).toEqual([added[0], added[2]].sort());
      expect(markers()).toBe(2);
    });

    it("forgets markers when the index is cleared or pruned", async () => {
      const hashes = await put("alpha\n", "beta\n");
      await fresh().candidates(hashes, lit("alpha"));
      expect(markers()).toBe(1);
      await fresh().clear();
      expect(markers()).toBe(0);
      // After a clear a new process indexes the scope again, and finds what it holds.
      const index = fresh();
      const looked = lookups(index);
      expect([...(await index.candidates([...hashes], lit("alpha"))).keys()]).toEqual([hashes[0]]);
      expect(looked).toHaveBeenCalled();
      expect(await index.status()).toMatchObject({ texts: 2 });
      expect(markers()).toBe(1);
      expect(await fresh().prune((h) => h !== hashes[1])).toBe(1);
      expect(markers()).toBe(0);
      expect([...(await fresh().candidates([...hashes], lit("beta"))).keys()]).toEqual([hashes[1]]);
    });

    it("ignores a marker of another generation", async () => {
      const hashes = await put("alpha\n", "beta\n");
      await fresh().candidates(hashes, lit("alpha"));
      // As if written before a clear by a process that raced it.
      internalsOf(t.afs).searchDb.db.exec("UPDATE text_meta SET value = value + 1 WHERE key = 'generation'");
      const index = fresh();
      const looked = lookups(index);
      expect([...(await index.candidates([...hashes], lit("beta"))).keys()]).toEqual([hashes[1]]);
      expect(looked).toHaveBeenCalled();
    });
  });

  it("keeps the filters of a text of many blocks in bands, which a new process reads to find its blocks", async () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `line ${i} of filler text ${i % 7}`);
    lines[31_000] = "the one needle";
    const text = Buffer.from(`${lines.join("\n")}\n`);
    const small = Buffer.from(`${"short text\n".repeat(4000)}needle\n`);
    const hashes = [sha256(text), sha256(small)] as Hash[];
    await internalsOf(t.afs).store.putBlobs([
      { hash: hashes[0] as Hash, data: text },
      { hash: hashes[1] as Hash, data: small },
    ]);
    const query: LiteralQuery = { op: "lit", folded: "the one needle" };
    const first = await new SqliteTextIndex(() => internalsOf(t.afs).searchDb, internalsOf(t.afs).store).candidates(
      hashes,
      query,
    );
    const db = internalsOf(t.afs).searchDb.db;
    expect(db.prepare("SELECT count(*) FROM text_bands").pluck().get()).toBe(BANDS);
    expect(db.prepare("SELECT max(length(blooms)) FROM text_blooms").pluck().get()).toBeLessThan(64 * BLOOM_BYTES);
    const blocks = first.get(hashes[0] as Hash);
    expect(blocks).toHaveLength(1);
    const again = new SqliteTextIndex(() => internalsOf(t.afs).searchDb, internalsOf(t.afs).store);
    expect(await again.candidates([...hashes], query)).toEqual(first);
    // Asked again, and for other literals, in one process: the same blocks as rows would give.
    for (const folded of ["the one needle", "line 3999", "filler text 3"]) {
      const got = await again.candidates(hashes, { op: "lit", folded });
      const view = await again.view(hashes[0] as Hash);
      const holding = (got.get(hashes[0] as Hash) ?? []).length;
      expect(holding).toBeGreaterThan(0);
      expect(view?.includes(folded)).toBe(true);
    }
    expect(await again.prune((h) => h !== hashes[0])).toBe(1);
    expect(db.prepare("SELECT count(*) FROM text_bands").pluck().get()).toBe(0);
  });
});
