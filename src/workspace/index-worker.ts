// The index builder's worker thread (started by index-rows-worker.ts): reads the blobs of each batch
// it is sent from the SQLite store, through a read-only connection of its own, inflates them and
// makes their rows (text-rows.ts: trigram documents, block filters), while the main thread writes
// the previous batch's rows into the index. A batch's bytes go back in one transferred buffer.
import { parentPort, workerData } from "node:worker_threads";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { checkedStore } from "../store/checked-store.js";
import { readPending, rowHead, type TextRow, textRow } from "../store/search/text-rows.js";
import { SqliteStore } from "../store/sqlite/store.js";

export interface WorkerSetup {
  /** The SQLite store file. */
  path: string;
  maxIndexBytes: number;
}

/** A batch to make rows of: the hashes not indexed yet, with their sizes (from the tree). */
export interface RowsRequest {
  id: number;
  hashes: Hash[];
  sizes: (number | undefined)[];
}

export type RowsReply =
  | { id: number; rows: TextRow[] }
  | { id: number; error: { code: string; message: string; details: Record<string, unknown> } };

const port = parentPort;
if (port) {
  const setup = workerData as WorkerSetup;
  const store = checkedStore(SqliteStore.open(setup.path, { readonly: true }));
  // One batch at a time, in the order sent (a reply's place in the main thread's queue).
  let queue = Promise.resolve();
  port.on("message", (message: RowsRequest | "close") => {
    queue = queue.then(() => (message === "close" ? close() : answer(message)));
  });
  const close = async (): Promise<void> => {
    await store.close();
    port.close();
  };
  const answer = async (message: RowsRequest): Promise<void> => {
    try {
      const rows: TextRow[] = [];
      for (const [i, hash] of message.hashes.entries()) {
        const pending = await readPending(store, hash, message.sizes[i], setup.maxIndexBytes);
        rows.push(textRow(pending, rowHead(pending, setup.maxIndexBytes)));
      }
      const buffer = pack(rows);
      port.postMessage({ id: message.id, rows } satisfies RowsReply, [buffer]);
    } catch (e) {
      const error =
        e instanceof AfsError
          ? { code: e.code, message: e.message, details: e.details }
          : { code: "INTERNAL", message: e instanceof Error ? e.message : String(e), details: {} };
      port.postMessage({ id: message.id, error } satisfies RowsReply);
    }
  };
}

/**
 * Moves every row's bytes (its document as latin1, its filters) into one new buffer, each row's
 * fields becoming views of it, so the batch is transferred, not copied, and the main thread binds
 * the documents as they are (FTS5 reads a blob value as its text).
 */
function pack(rows: TextRow[]): ArrayBuffer {
  let total = 0;
  for (const r of rows) {
    total += r.doc.length + (r.blooms?.byteLength ?? 0) + (r.lines?.byteLength ?? 0);
    for (const b of r.bands ?? []) total += b.byteLength;
  }
  const buffer = new ArrayBuffer(total);
  const bytes = Buffer.from(buffer);
  let at = 0;
  const put = (part: Uint8Array): Uint8Array => {
    bytes.set(part, at);
    at += part.byteLength;
    return new Uint8Array(buffer, at - part.byteLength, part.byteLength);
  };
  for (const r of rows) {
    if (typeof r.doc === "string") {
      // Tokens are [0-9a-z] and spaces: one byte a unit.
      const n = bytes.write(r.doc, at, "latin1");
      r.doc = new Uint8Array(buffer, at, n);
      at += n;
    } else r.doc = put(r.doc);
    if (r.blooms) r.blooms = put(r.blooms);
    if (r.lines) r.lines = put(r.lines);
    if (r.bands) r.bands = r.bands.map(put);
  }
  return buffer;
}
