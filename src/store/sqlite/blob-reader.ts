// A worker thread that reads and inflates a share of a search's small blobs (blob-readers.ts) on
// its own read-only connection to the store file, so a `grep -c` over many files uses a second
// core for the two costs that dominate it. A job is one batch; it answers with the blobs' bytes in
// one transferred buffer (no copy on the way), and the hashes of those stored as chunks for the
// caller to read.
import { parentPort, workerData } from "node:worker_threads";
import type { Hash } from "../../core/hash.js";
import { Inflater } from "../inflater.js";
import { openDatabase } from "./driver.js";
import { prepareSmall, readSmall } from "./small-blobs.js";

/** What the calling thread asks: the blobs among `hashes` of at most `max` bytes. */
export interface ReadJob {
  id: number;
  hashes: readonly Hash[];
  max: number;
}

/** What it answers: the blobs read, their bytes one after another in `data` (blob i ends at ends[i]), and those stored as chunks. */
export type ReadReply =
  | { id: number; hashes: Hash[]; ends: number[]; data: ArrayBuffer; chunked: Hash[] }
  | { id: number; error: { code: string | null; message: string } };

const port = parentPort;
if (port) {
  const db = openDatabase((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
  const statement = prepareSmall(db);
  const inflater = new Inflater();
  port.on("message", ({ id, hashes, max }: ReadJob) => {
    const names: Hash[] = [];
    const parts: Buffer[] = [];
    const chunked: Hash[] = [];
    try {
      readSmall(
        statement,
        hashes,
        max,
        inflater,
        (hash, bytes) => {
          names.push(hash);
          // A copy: the inflater reuses its buffer.
          parts.push(Buffer.from(bytes));
        },
        (hash) => chunked.push(hash),
      );
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      port.postMessage({
        id,
        error: { code: typeof code === "string" ? code : null, message: (e as Error).message },
      } satisfies ReadReply);
      return;
    }
    // One buffer of exactly their size, handed over whole (allocUnsafeSlow: its own ArrayBuffer, not
    // a slice of a pool), so nothing is copied on the way and nothing larger is kept alive.
    const data = Buffer.allocUnsafeSlow(parts.reduce((n, b) => n + b.byteLength, 0));
    const ends: number[] = [];
    let used = 0;
    for (const b of parts) {
      used += b.copy(data, used);
      ends.push(used);
    }
    port.postMessage({ id, hashes: names, ends, data: data.buffer, chunked } satisfies ReadReply, [data.buffer]);
  });
}
