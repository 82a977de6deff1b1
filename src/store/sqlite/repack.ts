// The SQLite side of Store.repack: inline blob rows and chunk rows, listed a page of keys at a time
// (better-sqlite3 cannot write while an iterator is open on its connection), each value read
// alone and rewritten by its own UPDATE, so other connections wait at most one row's write.
import type Database from "better-sqlite3";
import type { Hash } from "../../core/hash.js";
import { SEEKABLE_MIN } from "../blob-codec.js";
import type { RepackTarget } from "../repack.js";

const PAGE = 256;

type Guard = <T>(fn: () => T) => T;

/** Each table holding blob content, and how errors name one of its values. */
const TABLES = [
  { table: "blobs", what: (hash: Hash) => `content ${hash}` },
  { table: "chunks", what: (hash: Hash) => `chunk ${hash}` },
] as const;

/** Every value of blob content a repack may change, in key order, table by table. */
export async function* sqliteRepackTargets(db: Database.Database, guard: Guard): AsyncGenerator<RepackTarget> {
  for (const { table, what } of TABLES) {
    const st = guard(() => ({
      // A chunked blob's row holds no bytes (length 0), and values under SEEKABLE_MIN never change.
      list: db.prepare<[Hash, number, number], { hash: Hash; size: number }>(
        `SELECT hash, size FROM ${table} WHERE hash > ? AND size >= ? AND length(data) > 0 ORDER BY hash LIMIT ?`,
      ),
      read: db.prepare<[Hash], Buffer>(`SELECT data FROM ${table} WHERE hash = ?`).pluck(),
      write: db.prepare<[Buffer, Hash]>(`UPDATE ${table} SET data = ? WHERE hash = ?`),
    }));
    let after = "" as Hash;
    for (;;) {
      const page = guard(() => st.list.all(after, SEEKABLE_MIN, PAGE));
      for (const { hash, size } of page) {
        yield {
          what: what(hash),
          size,
          read: async () => guard(() => st.read.get(hash) ?? null),
          write: async (stored) => guard(() => st.write.run(stored, hash).changes === 1),
        };
      }
      const last = page[page.length - 1];
      if (!last || page.length < PAGE) break;
      after = last.hash;
    }
  }
}
