// The Store contract for large contents: blobs over `chunkBytes` round-trip byte for byte through
// every way in and out, ranges cross chunk boundaries, identical chunks are stored once, and
// sweeping removes only chunks no blob uses. Every Store runs it beside store-contract.ts.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { type Hash, sha256 } from "../../src/core/hash.js";
import type { Store } from "../../src/store/store.js";
import { type Skip, skippable } from "./skip.js";
import type { StoreFactory } from "./store-contract.js";

/** Deterministic, non-repeating bytes, so a misplaced chunk never compares equal by accident. */
function pattern(size: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** Feeds `data` in uneven pieces, so chunk boundaries never line up with the source's. */
async function* uneven(data: Buffer): AsyncGenerator<Uint8Array> {
  const steps = [1, 65_537, 1_000_003, 3];
  for (let at = 0, i = 0; at < data.byteLength; i++) {
    const n = steps[i % steps.length] as number;
    yield data.subarray(at, at + n);
    at += n;
  }
}

async function drain(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? `uncoded: ${String(e)}`;
  }
  return "resolved";
}

export function storeChunksContract(name: string, make: StoreFactory, options: { skip?: Skip[] } = {}): void {
  /** The suite's `it`, skipping what options.skip lists with its reason. */
  const it = skippable(options.skip);
  describe(`Store contract, large contents: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
    });
    afterEach(async () => {
      await cleanup();
    });

    it("round-trips contents at 0, 1, chunk-1, chunk, chunk+1 and several chunks, streamed or put whole", async () => {
      const c = store.chunkBytes;
      for (const [i, size] of [0, 1, c - 1, c, c + 1, 3 * c + 5].entries()) {
        const data = pattern(size, i + 1);
        const streamed = await store.putBlobStream(uneven(data));
        expect(streamed).toEqual({ hash: sha256(data), size });
        expect(await store.blobSize(streamed.hash)).toBe(size);
        expect((await store.getBlob(streamed.hash))?.equals(data)).toBe(true);
        expect((await drain(store.blobStream(streamed.hash))).equals(data)).toBe(true);

        const whole = pattern(size, i + 100);
        await store.putBlobs([{ hash: sha256(whole), data: whole }]);
        expect((await drain(store.blobStream(sha256(whole)))).equals(whole)).toBe(true);
        expect(await store.blobSize(sha256(whole))).toBe(size);
      }
      const listed = new Map<Hash, number>();
      for await (const o of store.listObjects("blob")) listed.set(o.hash, o.size);
      expect(listed.get(sha256(pattern(3 * c + 5, 6)))).toBe(3 * c + 5);
    });

    it("reads ranges within, across and past chunk boundaries", async () => {
      const c = store.chunkBytes;
      const data = pattern(3 * c + 17, 7);
      const { hash } = await store.putBlobStream(uneven(data));
      const small = pattern(100, 8);
      await store.putBlobs([{ hash: sha256(small), data: small }]);
      const cases: [number, number][] = [
        [0, 10],
        [c - 3, 6],
        [c, c],
        [c - 1, 2 * c + 2],
        [3 * c, 17],
        [3 * c + 10, 100],
        [data.byteLength, 5],
        [data.byteLength + 10, 5],
        [5, 0],
      ];
      for (const [offset, length] of cases) {
        const got = await store.readBlobRange(hash, offset, length);
        expect(got?.equals(data.subarray(offset, offset + length)), `${offset}+${length}`).toBe(true);
      }
      expect((await store.readBlobRange(sha256(small), 90, 50))?.equals(small.subarray(90))).toBe(true);
      expect(await store.readBlobRange(sha256("absent"), 0, 1)).toBeNull();
      expect(await store.blobSize(sha256("absent"))).toBeNull();
      expect(await codeOf(store.readBlobRange(hash, -1, 1))).toBe("INVALID_ARGUMENT");
      expect(await codeOf(drain(store.blobStream(sha256("absent"))))).toBe("NOT_FOUND");
    });

    it("reads several ranges of a text in one call, the same bytes as one at a time (stored compressed, seekable)", async () => {
      const c = store.chunkBytes;
      // Compressible lines, so every value is stored deflated in segments, and ranges inflate only theirs.
      const line = (i: number) => `${i} ${(i * 2654435761) % 1_000_003} the quick brown fox\n`;
      let text = "";
      for (let i = 0; text.length < 2 * c + 300_000; i++) text += line(i);
      const big = Buffer.from(text);
      const medium = big.subarray(0, 200_000);
      const { hash } = await store.putBlobStream(uneven(big));
      await store.putBlobs([{ hash: sha256(medium), data: Buffer.from(medium) }]);
      const ranges = [
        { offset: 0, length: 1 },
        { offset: 16_383, length: 2 },
        { offset: c - 20_000, length: 40_000 },
        { offset: 100_000, length: 0 },
        { offset: 2 * c + 1, length: 70_000 },
        { offset: big.byteLength - 5, length: 50 },
        { offset: big.byteLength + 5, length: 5 },
        { offset: 123_457, length: 16_384 * 3 + 11 },
      ];
      const got = await store.readBlobRanges(hash, ranges);
      expect(got).toHaveLength(ranges.length);
      for (const [i, { offset, length }] of ranges.entries()) {
        const want = big.subarray(offset, offset + length);
        expect(got?.[i]?.equals(want), `${offset}+${length}`).toBe(true);
        expect((await store.readBlobRange(hash, offset, length))?.equals(want)).toBe(true);
      }
      const parts = await store.readBlobRanges(sha256(medium), [
        { offset: 70_000, length: 20_000 },
        { offset: 5, length: 10 },
      ]);
      expect(parts?.[0]?.equals(medium.subarray(70_000, 90_000))).toBe(true);
      expect(parts?.[1]?.equals(medium.subarray(5, 15))).toBe(true);
      expect((await store.getBlob(hash))?.equals(big)).toBe(true);
      expect((await store.getBlob(sha256(medium)))?.equals(medium)).toBe(true);
      expect(await store.readBlobRanges(sha256("absent"), [{ offset: 0, length: 1 }])).toBeNull();
      expect(
        await codeOf(
          store.readBlobRanges(hash, [
            { offset: 0, length: 1 },
            { offset: 1, length: -1 },
          ]),
        ),
      ).toBe("INVALID_ARGUMENT");
      expect(await store.checkIntegrity()).toEqual([]);
    });

    it("stores identical chunks once and sweeps only chunks no blob uses, after the grace time", async () => {
      const c = store.chunkBytes;
      const shared = pattern(2 * c, 9);
      const a = Buffer.concat([shared, pattern(c, 10)]); // chunks: s1 s2 a3
      const b = Buffer.concat([shared, pattern(c + 1, 11)]); // chunks: s1 s2 b3 b4
      const ha = (await store.putBlobStream(uneven(a))).hash;
      const hb = (await store.putBlobStream(uneven(b))).hash;
      expect((await store.sweepChunks(Date.now() + 1000)).deleted).toBe(0);

      await store.deleteObjects("blob", [ha]);
      expect(await store.sweepChunks(0)).toEqual({ deleted: 0, bytes: 0 });
      expect(await store.sweepChunks(Date.now() + 1000)).toEqual({ deleted: 1, bytes: c });
      expect((await drain(store.blobStream(hb))).equals(b)).toBe(true);

      await store.deleteObjects("blob", [hb]);
      // s1, s2, b3 and b4: the shared chunks were stored once.
      expect(await store.sweepChunks(Date.now() + 1000)).toEqual({ deleted: 4, bytes: 3 * c + 1 });
      expect(await store.checkIntegrity()).toEqual([]);
    });

    it("refuses to return a blob over 512 MiB whole, and serves its ranges and stream", async () => {
      const zeros = Buffer.alloc(1024 * 1024);
      const mib = 513;
      const source = async function* () {
        for (let i = 0; i < mib; i++) yield zeros;
        yield Buffer.from("end");
      };
      const { hash, size } = await store.putBlobStream(source());
      expect(size).toBe(mib * zeros.byteLength + 3);
      const err = await store.getBlob(hash).catch((e: unknown) => e as { code: string; message: string });
      expect(err).toMatchObject({ code: "QUOTA_EXCEEDED" });
      expect((err as { message: string }).message).toMatch(/range|stream/);
      expect((await store.readBlobRange(hash, size - 5, 10))?.toString("latin1")).toBe("\0\0end");
      const h = createHash("sha256");
      for await (const p of store.blobStream(hash)) h.update(p);
      expect(h.digest("hex")).toBe(hash);
      expect(await store.checkIntegrity()).toEqual([]);
    });
  });
}
