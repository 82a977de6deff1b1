// What the content index makes of one blob before it is written: the blob read and classified
// (text, binary, too large to index), then its posting keys and, for a text of several blocks,
// its block filters and line table. Work on bytes alone, apart from the index file, so the builder's
// worker thread (workspace/index-worker.ts) does it while the main thread writes the rows.

import { isAscii } from "node:buffer";
import { AfsError } from "../../core/errors.js";
import { EMPTY_SHA256, type Hash } from "../../core/hash.js";
import { decodeText } from "../../core/text.js";
import { bandsOf, TRANSPOSE_MIN_BLOCKS } from "../../search/block-filters.js";
import { blockBounds, blockLines } from "../../search/text-blocks.js";
import { asciiTrigramKeys, blockedTrigramKeys, trigramKeysOf } from "../../search/trigrams.js";
import type { Store } from "../store.js";

export enum State {
  Text = 0,
  Binary = 1,
  Large = 2,
}

/** How much of a blob decodeText looks at for a NUL, the mark of binary content. */
export const BINARY_SNIFF_BYTES = 8192;

/** A blob read for indexing: its bytes (only the first few for one too large to index) and its size. */
export interface Pending {
  hash: Hash;
  data: Buffer;
  size: number;
  text: string | true | null;
}

/** What a blob's row holds, known before its document is made. */
export interface RowHead {
  state: State;
  blocks: number;
  /** Block starts (text-blocks.ts) of a text; empty for any other blob. */
  bounds: number[];
}

/** What goes into the index for one blob: its row, its posting keys and its filters. */
export interface TextRow {
  hash: Hash;
  state: State;
  size: number;
  blocks: number;
  /** The distinct posting keys of a text (trigram-token.ts): a scratch view until the next row is made. */
  keys: Uint32Array;
  /** A text of 2 to TRANSPOSE_MIN_BLOCKS - 1 blocks: its block filters, as stored. */
  blooms?: Uint8Array;
  /** A text of several blocks: blockLines' table, as bytes. */
  lines?: Uint8Array;
  /** A text of TRANSPOSE_MIN_BLOCKS or more: its filters in bands (bandsOf), as bytes. */
  bands?: Uint8Array[];
}

type BlobReader = Pick<Store, "blobSize" | "readBlobRange" | "getBlob" | "eachSmallBlob">;

/** Blobs up to this size are read a batch to a query (Store.eachSmallBlob); larger ones one by one. */
const BATCH_READ_MAX = 64 * 1024;
/** Blobs to a batch read: their bytes are held until their rows are made. */
const BATCH_READ = 256;

/**
 * readPending for each of `hashes` in order, the small ones (known sizes up to BATCH_READ_MAX)
 * read a batch to a query, inflated by one reused stream: one lookup and one zlib stream per blob
 * were ~28% of the builder's reading thread.
 */
export async function* readPendings(
  store: BlobReader,
  hashes: readonly Hash[],
  sizeOf: (hash: Hash, i: number) => number | undefined,
  maxIndexBytes: number,
): AsyncIterable<Pending> {
  for (let from = 0; from < hashes.length; from += BATCH_READ) {
    const slice = hashes.slice(from, from + BATCH_READ);
    const small = slice.filter((h, i) => h !== EMPTY_SHA256 && (sizeOf(h, from + i) ?? Infinity) <= BATCH_READ_MAX);
    const read = new Map<Hash, Buffer>();
    // Copied: the bytes visited may be the inflater's buffer, reused for the next blob.
    await store.eachSmallBlob(small, BATCH_READ_MAX, (hash, bytes) => read.set(hash, Buffer.from(bytes)));
    for (const [i, hash] of slice.entries()) {
      const data = read.get(hash);
      yield data
        ? pendingOf(hash, data, maxIndexBytes)
        : await readPending(store, hash, sizeOf(hash, from + i), maxIndexBytes);
    }
  }
}

/** What readPending makes of a blob whose bytes are in hand. */
function pendingOf(hash: Hash, data: Buffer, maxIndexBytes: number): Pending {
  const size = data.length;
  const head = size > BINARY_SNIFF_BYTES ? data.subarray(0, BINARY_SNIFF_BYTES) : null;
  const skip = size > maxIndexBytes || head?.includes(0) === true;
  const kept = skip && head ? Buffer.from(head) : data;
  return { hash, data: kept, size, text: skip ? null : asText(kept) };
}

/**
 * Reads a blob for indexing. It is classified by its first bytes before it is read whole: a binary
 * one (a NUL up front) or one too large to index (it may be GiBs) is never inflated whole. Binaries
 * are most of a real tree's bytes (70% of node_modules), which a first search read whole only to skip.
 */
export async function readPending(
  store: BlobReader,
  hash: Hash,
  knownSize: number | undefined,
  maxIndexBytes: number,
): Promise<Pending> {
  const size = hash === EMPTY_SHA256 ? 0 : (knownSize ?? (await store.blobSize(hash)) ?? 0);
  const head =
    size > BINARY_SNIFF_BYTES ? ((await store.readBlobRange(hash, 0, BINARY_SNIFF_BYTES)) ?? Buffer.alloc(0)) : null;
  const skip = size > maxIndexBytes || head?.includes(0) === true;
  const data = skip && head ? head : await wholeBlob(store, hash);
  const text = skip ? null : asText(data);
  return { hash, data, size, text };
}

async function wholeBlob(store: BlobReader, hash: Hash): Promise<Buffer> {
  if (hash === EMPTY_SHA256) return Buffer.alloc(0);
  const data = await store.getBlob(hash);
  if (!data) throw new AfsError("IO_ERROR", `content ${hash} is missing from the store; run afs fsck`);
  return data;
}

/** A pending blob's state and blocks. */
export function rowHead(pending: Pending, maxIndexBytes: number): RowHead {
  const { data, size, text } = pending;
  // A large blob with a NUL up front is binary to grep (decodeText's rule), so no search reads it again.
  const large = size > maxIndexBytes && !data.subarray(0, BINARY_SNIFF_BYTES).includes(0);
  const state = text !== null ? State.Text : large ? State.Large : State.Binary;
  const bounds = text !== null ? blockBounds(data.length, (from) => data.indexOf(10, from)) : [];
  const blocks = bounds.length > 2 ? bounds.length - 1 : 1;
  return { state, blocks, bounds };
}

const NO_KEYS = new Uint32Array(0);

/**
 * A pending blob's row whole: its head and what is indexed of it (nothing but the row for a
 * non-text). Its keys are a scratch view, valid until the next row is made: they are added to a
 * PostingsBuilder at once.
 */
export function textRow(pending: Pending, head: RowHead): TextRow {
  const { hash, data, size, text } = pending;
  const row: TextRow = { hash, state: head.state, size, blocks: head.blocks, keys: NO_KEYS };
  if (text === null) return row;
  const { bounds, blocks } = head;
  if (bounds.length > 2) {
    const { keys, blooms } = blockedTrigramKeys(data, bounds);
    row.keys = keys;
    row.lines = new Uint8Array(blockLines(data, bounds).buffer);
    if (blocks >= TRANSPOSE_MIN_BLOCKS) {
      row.bands = bandsOf(blooms, blocks).map((bits) => new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
    } else row.blooms = blooms;
  } else row.keys = text === true ? asciiTrigramKeys(data) : trigramKeysOf(text);
  return row;
}

/**
 * What decodeText decides about a blob (null: binary), without decoding all-ASCII text, which is
 * valid UTF-8 as it stands (true): most source is, and the index reads it as bytes.
 */
export function asText(data: Buffer): string | true | null {
  if (data.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return null;
  return isAscii(data) ? true : decodeText(data);
}
