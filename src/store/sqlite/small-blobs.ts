// Reading many small blobs by hash in one query per batch, inflated by one reused zlib stream
// (SqliteBlobs.eachSmall): one statement per blob was half the read time of a cold `grep -c`.
import type Database from "better-sqlite3";
import type { Hash } from "../../core/hash.js";
import { decodeReusing } from "../blob-codec.js";
import type { Inflater } from "../inflater.js";

/** Hashes per query: their values (a few KiB each) are held together. */
export const SMALL_BATCH = 256;

type Row = { hash: Hash; size: number; data: Buffer };

/** The hashes as a JSON array: a statement per blob was half the read time of thousands of them. */
export const prepareSmall = (db: Database.Database): Database.Statement<[string, number], Row> =>
  db.prepare<[string, number], Row>(
    "SELECT hash, size, data FROM blobs WHERE hash IN (SELECT value FROM json_each(?)) AND size <= ?",
  );

/**
 * Each stored blob among `hashes` of at most `max` bytes to `visit` (bytes valid during the call),
 * or to `chunked` when it is stored as chunks (an older layout could chunk a small one) for the
 * caller to read; throws IO_ERROR for a value that does not decode.
 */
export function readSmall(
  statement: Database.Statement<[string, number], Row>,
  hashes: readonly Hash[],
  max: number,
  inflater: Inflater,
  visit: (hash: Hash, bytes: Buffer) => void,
  chunked: (hash: Hash) => void,
): void {
  for (let i = 0; i < hashes.length; i += SMALL_BATCH) {
    for (const row of statement.all(JSON.stringify(hashes.slice(i, i + SMALL_BATCH)), max)) {
      if (row.data.byteLength === 0 && row.size > 0) chunked(row.hash);
      else visit(row.hash, decodeReusing(row.data, row.size, `content ${row.hash}`, inflater));
    }
  }
}
