// The Store contract for repack: values written in the format before seekable values (one deflate
// stream, or raw) are re-encoded in place, inline blobs and chunks alike, read back byte for byte,
// and a second run changes nothing. Old values are made by writing their bytes straight into the
// backing store (RawValues), as an older afs left them.
import { deflateRawSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { type Hash, sha256 } from "../../src/core/hash.js";
import type { ByteRange } from "../../src/store/chunking.js";
import type { RepackProgress } from "../../src/store/repack.js";
import type { Store } from "../../src/store/store.js";
import { type Skip, skippable } from "./skip.js";
import type { StoreFactory } from "./store-contract.js";

export type ValueKind = "blob" | "chunk";

/** A store's stored values as bytes, behind its back. */
export interface RawValues {
  /** Replaces an existing value's stored bytes. */
  set(kind: ValueKind, hash: Hash, stored: Buffer): Promise<void>;
  /** A value's stored bytes, or null when it is not there. */
  get(kind: ValueKind, hash: Hash): Promise<Buffer | null>;
  close(): Promise<void>;
}

export type RawAccess = (store: Store) => Promise<RawValues>;

const SEEKABLE = 0xfe;

/** Source-like text of about `size` bytes: compresses well, but no two lines alike. */
function prose(size: number, seed: number): Buffer {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < size; i++) {
    const line = `export const v${seed}_${i} = ${(i * 2654435761 + seed) % 1000003}; // seed ${seed}\n`;
    lines.push(line);
    n += line.length;
  }
  return Buffer.from(lines.join("")).subarray(0, size);
}

/** The format an older afs wrote a value in: one deflate stream. */
const oneStream = (content: Buffer): Buffer => deflateRawSync(content, { level: 1 });

export function storeRepackContract(
  name: string,
  make: StoreFactory,
  rawAccess: RawAccess,
  options: { skip?: Skip[] } = {},
): void {
  const it = skippable(options.skip);
  describe(`Store contract, repack: ${name}`, () => {
    let store: Store;
    let raw: RawValues;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
      raw = await rawAccess(store);
    });
    afterEach(async () => {
      await raw.close();
      await cleanup();
    });

    /** Reads every way a search or a reader does, and compares with `content`. */
    async function expectContent(content: Buffer): Promise<void> {
      const hash = sha256(content);
      expect((await store.getBlob(hash))?.equals(content)).toBe(true);
      const size = content.byteLength;
      const ranges: ByteRange[] = [
        { offset: 0, length: 10 },
        { offset: 70_000, length: 40_000 },
        { offset: store.chunkBytes - 7, length: 20 },
        { offset: size - 5, length: 100 },
      ];
      const got = await store.readBlobRanges(hash, ranges);
      for (const [i, r] of ranges.entries()) {
        expect(got?.[i]?.equals(content.subarray(r.offset, r.offset + r.length)), `range ${i}`).toBe(true);
      }
    }

    it("re-encodes old one-stream and raw values, inline and chunked, which read back identical", async () => {
      const c = store.chunkBytes;
      const stream = prose(300_000, 1);
      const plain = prose(200_000, 2);
      const chunked = prose(c + c / 2, 3);
      const small = prose(2_000, 4);
      const binary = Buffer.concat([Buffer.alloc(1), prose(150_000, 5)]);
      await store.putBlobs([stream, plain, small, binary].map((data) => ({ hash: sha256(data), data })));
      await store.putBlobStream([chunked]);
      const pieces = [chunked.subarray(0, c), chunked.subarray(c)];
      const old: Array<[ValueKind, Hash, Buffer]> = [
        ["blob", sha256(stream), oneStream(stream)],
        ["blob", sha256(plain), plain],
        ...pieces.map((p): [ValueKind, Hash, Buffer] => ["chunk", sha256(p), oneStream(p)]),
      ];
      for (const [kind, hash, stored] of old) await raw.set(kind, hash, stored);
      const untouched = await Promise.all([small, binary].map((b) => raw.get("blob", sha256(b))));

      const progress: RepackProgress[] = [];
      const result = await store.repack((p) => {
        progress.push(p);
      });

      const now = await Promise.all(old.map(([kind, hash]) => raw.get(kind, hash)));
      expect(result).toEqual({
        values: old.length,
        bytes_before: old.reduce((n, [, , stored]) => n + stored.byteLength, 0),
        bytes_after: now.reduce((n, stored) => n + (stored?.byteLength ?? 0), 0),
      });
      for (const stored of now) expect(stored?.[0]).toBe(SEEKABLE);
      expect(progress.at(-1)).toEqual({ ...result, visited: progress.length });
      expect(progress.map((p) => p.visited)).toEqual(progress.map((_, i) => i + 1));
      for (const content of [stream, plain, chunked, small, binary]) await expectContent(content);
      expect(await Promise.all([small, binary].map((b) => raw.get("blob", sha256(b))))).toEqual(untouched);
      expect(await store.checkIntegrity()).toEqual([]);

      expect(await store.repack()).toEqual({ values: 0, bytes_before: 0, bytes_after: 0 });
      expect(await Promise.all(old.map(([kind, hash]) => raw.get(kind, hash)))).toEqual(now);
    });

    it("repacks nothing in a store written today", async () => {
      const text = prose(500_000, 6);
      await store.putBlobs([{ hash: sha256(text), data: text }]);
      await store.putBlobStream([prose(store.chunkBytes + 100_000, 7)]);
      expect(await store.repack()).toEqual({ values: 0, bytes_before: 0, bytes_after: 0 });
    });

    it("does not bring back a value deleted after the repack listed it", async () => {
      const contents = [prose(100_000, 8), prose(100_000, 9)];
      const hashes = contents.map((b) => sha256(b));
      await store.putBlobs(contents.map((data) => ({ hash: sha256(data), data })));
      for (const b of contents) await raw.set("blob", sha256(b), oneStream(b));
      let deleted = false;
      // After the first value is rewritten, gc deletes both; the second was listed in the same page.
      const result = await store.repack(async (p) => {
        if (p.values === 1 && !deleted) {
          deleted = true;
          expect(await store.deleteObjects("blob", hashes)).toBe(2);
        }
      });
      expect(deleted).toBe(true);
      expect(result.values).toBe(1);
      for (const h of hashes) {
        expect(await store.getBlob(h)).toBeNull();
        expect(await raw.get("blob", h)).toBeNull();
      }
      expect(await store.checkIntegrity()).toEqual([]);
    });
  });
}
