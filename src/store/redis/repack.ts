// The Redis side of Store.repack: inline blobs and chunks, listed from their index sets a page at a
// time, each value read alone and rewritten by a script that sets it only while it still exists.
import type { Hash } from "../../core/hash.js";
import { SEEKABLE_MIN } from "../blob-codec.js";
import type { RepackTarget } from "../repack.js";
import { indexPages } from "./blobs.js";
import { arr, buf, num, type RedisLink } from "./client.js";
import type { Keys } from "./keys.js";
import { REWRITE_VALUE } from "./scripts.js";

/** Each index of values holding blob content, the key of one value, and how errors name it. */
const KINDS = [
  { index: "blob", key: (keys: Keys, hash: Hash) => keys.object("blob", hash), what: (h: Hash) => `content ${h}` },
  { index: "chunk", key: (keys: Keys, hash: Hash) => keys.chunk(hash), what: (h: Hash) => `chunk ${h}` },
] as const;

/** Every value of blob content a repack may change, index by index in hash order. */
export async function* redisRepackTargets(link: RedisLink, keys: Keys): AsyncGenerator<RepackTarget> {
  for (const kind of KINDS) {
    for await (const page of indexPages(link, keys, kind.index)) {
      const metas = await Promise.all(page.map((h) => link.read(["HMGET", kind.key(keys, h), "s", "n"])));
      for (const [i, hash] of page.entries()) {
        const [s, n] = arr(metas[i] ?? null);
        const size = num(s ?? null);
        // Gone since listed, chunked (its bytes are in chunks), or too small ever to change.
        if (size === null || num(n ?? null) !== null || size < SEEKABLE_MIN) continue;
        const key = kind.key(keys, hash);
        yield {
          what: kind.what(hash),
          size,
          read: async () => buf(await link.read(["HGET", key, "d"])),
          write: async (stored) => (await link.run(REWRITE_VALUE, [key], [stored])) === 1,
        };
      }
    }
  }
}
