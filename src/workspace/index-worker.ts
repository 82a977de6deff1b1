// The index builder's worker thread (started by index-rows-worker.ts): reads the blobs of each batch
// it is sent from the SQLite store, through a read-only connection of its own, inflates them and
// makes their rows (text-rows.ts: trigram documents, block filters), while the main thread writes
// the previous batch's rows into the index. A batch's bytes go back in one transferred buffer.
import { parentPort, workerData } from "node:worker_threads";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { checkedStore } from "../store/checked-store.js";
import { readPendings, rowHead, type TextRow, textRow } from "../store/search/text-rows.js";
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

/** A batch's buffer handed back once its rows are written, to pack a later batch into. */
export interface Recycle {
  recycle: ArrayBuffer;
}

export type RowsReply =
  | { id: number; rows: TextRow[]; buffer: ArrayBuffer }
  | { id: number; error: { code: string; message: string; details: Record<string, unknown> } };

const port = parentPort;
if (port) {
  const setup = workerData as WorkerSetup;
  const store = checkedStore(SqliteStore.open(setup.path, { readonly: true }));
  // One batch at a time, in the order sent (a reply's place in the main thread's queue).
  let queue = Promise.resolve();
  // Buffers the main thread is done with: the batches' bytes go round, not left to the GC (a
  // transferred buffer is freed only when the main thread next collects, which it seldom does).
  const free: ArrayBuffer[] = [];
  port.on("message", (message: RowsRequest | Recycle | "close") => {
    if (typeof message === "object" && "recycle" in message) {
      if (free.length < 2) free.push(message.recycle);
      return;
    }
    queue = queue.then(() => (message === "close" ? close() : answer(message)));
  });
  const close = async (): Promise<void> => {
    await store.close();
    port.close();
  };
  const answer = async (message: RowsRequest): Promise<void> => {
    try {
      const packer = new Packer(free.pop());
      const rows: TextRow[] = [];
      const sizeOf = (_: Hash, i: number) => message.sizes[i];
      for await (const pending of readPendings(store, message.hashes, sizeOf, setup.maxIndexBytes)) {
        rows.push(packer.take(textRow(pending, rowHead(pending, setup.maxIndexBytes))));
      }
      const buffer = packer.finish(rows);
      port.postMessage({ id: message.id, rows, buffer } satisfies RowsReply, [buffer]);
    } catch (e) {
      const error =
        e instanceof AfsError
          ? { code: e.code, message: e.message, details: e.details }
          : { code: "INTERNAL", message: e instanceof Error ? e.message : String(e), details: {} };
      port.postMessage({ id: message.id, error } satisfies RowsReply);
    }
  };
}

/** Where a row's bytes went in the batch's buffer: [offset, length] pairs, doc first. */
type Spans = number[];

/**
 * Copies each row's bytes (its document as latin1, its filters) into one growing buffer as the row
 * is made (its document is a scratch view until the next), then makes every row's fields views of
 * that buffer, so the batch is transferred, not copied, and the main thread binds the documents as
 * they are (FTS5 reads a blob value as its text). No string per document is made here.
 */
class Packer {
  /** The last batch's size: batches are alike, so most are packed with no regrowth (a copy, and twice the memory meanwhile). */
  private static last = 1 << 20;
  private bytes: Buffer;
  private at = 0;

  /** Packs into `reuse` when it is as large as the last batch. */
  constructor(reuse?: ArrayBuffer) {
    const want = Packer.last + (Packer.last >>> 3);
    this.bytes = reuse && reuse.byteLength >= want ? Buffer.from(reuse) : Buffer.allocUnsafeSlow(want);
  }
  private readonly spans = new WeakMap<TextRow, Spans>();

  take(row: TextRow): TextRow {
    const spans: Spans = [];
    this.put(row.doc, spans);
    if (row.blooms) this.put(row.blooms, spans);
    if (row.lines) this.put(row.lines, spans);
    for (const b of row.bands ?? []) this.put(b, spans);
    this.spans.set(row, spans);
    return row;
  }

  /** The buffer, with the rows' fields pointed into it. */
  finish(rows: readonly TextRow[]): ArrayBuffer {
    Packer.last = Math.max(Packer.last, this.at);
    // Its own, never shared: allocUnsafeSlow, or a buffer handed back.
    const buffer = this.bytes.buffer as ArrayBuffer;
    for (const row of rows) {
      const spans = this.spans.get(row) as Spans;
      let k = 0;
      const view = (): Uint8Array => {
        const v = new Uint8Array(buffer, spans[k] as number, spans[k + 1] as number);
        k += 2;
        return v;
      };
      row.doc = view();
      if (row.blooms) row.blooms = view();
      if (row.lines) row.lines = view();
      if (row.bands) row.bands = row.bands.map(view);
    }
    return buffer;
  }

  private put(part: string | Uint8Array, spans: Spans): void {
    const length = typeof part === "string" ? part.length : part.byteLength;
    if (this.at + length > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length + (this.bytes.length >>> 1), this.at + length));
      this.bytes.copy(grown, 0, 0, this.at);
      this.bytes = grown;
    }
    // A document string's tokens are [0-9a-z] and spaces: one byte a unit.
    if (typeof part === "string") this.bytes.write(part, this.at, "latin1");
    else this.bytes.set(part, this.at);
    spans.push(this.at, length);
    this.at += length;
  }
}
