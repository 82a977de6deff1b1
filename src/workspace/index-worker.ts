// The index builder's worker thread (started by index-rows-worker.ts): reads the blobs of each batch
// it is sent from the SQLite store, through a read-only connection of its own, inflates them and
// makes their rows (text-rows.ts: posting keys, block filters) and the batch's posting lists
// (search/postings.ts), while the main thread writes the previous batch's into the index. A
// batch's bytes go back in transferred buffers.
import { parentPort, workerData } from "node:worker_threads";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { type EncodedPostings, PART_POSTINGS, PostingsBuilder } from "../search/postings.js";
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
  | { id: number; rows: TextRow[]; buffer: ArrayBuffer; postings: EncodedPostings[] }
  | { id: number; error: { code: string; message: string; details: Record<string, unknown> } };

const port = parentPort;
if (port) {
  const setup = workerData as WorkerSetup;
  const store = checkedStore(SqliteStore.open(setup.path, { readonly: true }));
  // One batch at a time, in the order sent (a reply's place in the main thread's queue), its lists
  // made in one builder whose buffers serve every batch.
  const postings = new PostingsBuilder();
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
      const parts: EncodedPostings[] = [];
      const sizeOf = (_: Hash, i: number) => message.sizes[i];
      for await (const pending of readPendings(store, message.hashes, sizeOf, setup.maxIndexBytes)) {
        const row = textRow(pending, rowHead(pending, setup.maxIndexBytes));
        // Its place in the batch is its place in the writer's ids (insertRows).
        postings.add(rows.length, row.keys);
        row.keys = NO_KEYS;
        if (postings.postings >= PART_POSTINGS) parts.push(postings.finish());
        rows.push(packer.take(row));
      }
      const buffer = packer.finish(rows);
      parts.push(postings.finish());
      const transfer = [
        buffer,
        ...parts.flatMap((p) => [p.keys.buffer, p.ends.buffer, p.bytes.buffer]),
      ] as ArrayBuffer[];
      port.postMessage({ id: message.id, rows, buffer, postings: parts } satisfies RowsReply, transfer);
    } catch (e) {
      postings.reset();
      const error =
        e instanceof AfsError
          ? { code: e.code, message: e.message, details: e.details }
          : { code: "INTERNAL", message: e instanceof Error ? e.message : String(e), details: {} };
      port.postMessage({ id: message.id, error } satisfies RowsReply);
    }
  };
}

/** Where a row's bytes went in the batch's buffer: [offset, length] pairs. */
type Spans = number[];

const NO_KEYS = new Uint32Array(0);

/**
 * Copies each row's filters and line table into one growing buffer as the row is made, then makes
 * every row's fields views of that buffer, so the batch is transferred, not copied.
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
      if (row.blooms) row.blooms = view();
      if (row.lines) row.lines = view();
      if (row.bands) row.bands = row.bands.map(view);
    }
    return buffer;
  }

  private put(part: Uint8Array, spans: Spans): void {
    const length = part.byteLength;
    if (this.at + length > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length + (this.bytes.length >>> 1), this.at + length));
      this.bytes.copy(grown, 0, 0, this.at);
      this.bytes = grown;
    }
    this.bytes.set(part, this.at);
    spans.push(this.at, length);
    this.at += length;
  }
}
