// The content index's posting lists: for each posting key (trigram-token.ts), the row ids of the
// texts holding it. Made here from a batch of texts' keys, on bytes alone (the builder's worker
// thread does it), and read back for a query. The index file keeps them in segments
// (store/search/postings-sqlite.ts).
//
// A list is unsigned LEB128 varints: each the gap from the previous id, the first from 0. A 0
// (never a gap: ids only grow) starts over from 0, so two segments' lists join by putting a 0
// between them, and a merge copies bytes without decoding them.

import { POSTING_KEYS } from "./trigram-token.js";

/** A batch's lists (or a part's): key `keys[i]`'s is `bytes[ends[i - 1] ?? 0 .. ends[i])`. */
export interface EncodedPostings {
  /** The first text's place in the batch: its segment is ordered by it among the others. */
  first: number;
  /** Distinct keys, ascending. */
  keys: Uint32Array;
  ends: Uint32Array;
  bytes: Uint8Array;
}

/**
 * Postings a builder holds before its lists are finished as a part of their own (a segment): it
 * holds them at 4 bytes each, twice over while finishing, and a batch of large bundles (a real
 * tree's node_modules) came to tens of millions. A batch is written as one or more parts.
 */
export const PART_POSTINGS = 1 << 21;

// Per-key counts, then cursors, for the counting sort in finish(): zeroed after each use, so one
// table serves every batch of the process (12 MB, allocated on first use).
let countTable: Uint32Array | undefined;

/**
 * A batch's lists in the making. Texts are added with their place in the batch (`local`, rising);
 * their lists hold local + 1 until `rebase` turns them into row ids, once the writer knows the
 * first id of the batch: the worker thread that makes them runs ahead of the writer. After
 * finish() it is empty again, and keeps its buffers (sized to the largest batch) for the next.
 */
export class PostingsBuilder {
  private keys = new Uint32Array(1 << 16);
  private order = new Uint32Array(0);
  private length = 0;
  private locals: number[] = [];
  private starts: number[] = [];

  /** Keys held so far: the batch's memory, 4 bytes each until finish. */
  get postings(): number {
    return this.length;
  }

  /** Adds the distinct keys of the text at `local` (copied: they may be a scratch view). */
  add(local: number, keys: Uint32Array): void {
    const last = this.locals[this.locals.length - 1];
    if (last !== undefined && local <= last) throw new Error(`postings added out of order: ${local} after ${last}`);
    if (keys.length === 0) return;
    if (this.length + keys.length > this.keys.length) {
      const grown = new Uint32Array(Math.max(this.keys.length * 2, this.length + keys.length));
      grown.set(this.keys.subarray(0, this.length));
      this.keys = grown;
    }
    this.keys.set(keys, this.length);
    this.locals.push(local);
    this.starts.push(this.length);
    this.length += keys.length;
  }

  /** The batch's lists, by a counting sort of its keys: no list object per key. */
  finish(): EncodedPostings {
    const n = this.length;
    const all = this.keys;
    countTable ??= new Uint32Array(POSTING_KEYS);
    const table = countTable;
    const touched: number[] = [];
    for (let i = 0; i < n; i++) {
      const k = all[i] as number;
      if ((table[k] as number) === 0) touched.push(k);
      table[k] = (table[k] as number) + 1;
    }
    const keys = Uint32Array.from(touched).sort();
    // Counts become each key's first slot in `order`.
    let at = 0;
    for (const k of keys) {
      const c = table[k] as number;
      table[k] = at;
      at += c;
    }
    if (this.order.length < n) this.order = new Uint32Array(n);
    const order = this.order;
    for (let d = 0; d < this.locals.length; d++) {
      const value = (this.locals[d] as number) + 1;
      const end = this.starts[d + 1] ?? n;
      for (let i = this.starts[d] as number; i < end; i++) {
        const k = all[i] as number;
        const slot = table[k] as number;
        order[slot] = value;
        table[k] = slot + 1;
      }
    }
    // Each key's cursor now sits at its list's end; the lists are written in key order.
    const ends = new Uint32Array(keys.length);
    let bytes = new Uint8Array(n + 64);
    let out = 0;
    let from = 0;
    for (let j = 0; j < keys.length; j++) {
      const k = keys[j] as number;
      const to = table[k] as number;
      table[k] = 0;
      let previous = 0;
      for (let i = from; i < to; i++) {
        if (out + 5 > bytes.length) {
          const grown = new Uint8Array(bytes.length * 2);
          grown.set(bytes);
          bytes = grown;
        }
        const value = order[i] as number;
        out = putVarint(bytes, out, value - previous);
        previous = value;
      }
      ends[j] = out;
      from = to;
    }
    const first = this.locals[0] ?? 0;
    this.reset();
    return { first, keys, ends, bytes: bytes.subarray(0, out) };
  }

  /** Drops what was added (a batch that failed midway). */
  reset(): void {
    this.length = 0;
    this.locals = [];
    this.starts = [];
  }
}

function putVarint(bytes: Uint8Array, at: number, value: number): number {
  let v = value;
  let i = at;
  while (v >= 0x80) {
    bytes[i++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  bytes[i++] = v;
  return i;
}

/** Bytes of a varint. */
const varintBytes = (value: number): number => {
  let n = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 128)) n++;
  return n;
};

/**
 * A batch's list as stored: its first value (local + 1) made row id `base + local`; the gaps after
 * it stay as they are. Written into `scratch` when it has room (the caller binds it at once).
 */
export function rebase(list: Uint8Array, base: number, scratch?: Uint8Array): Uint8Array {
  let first = 0;
  let scale = 1;
  let i = 0;
  for (;;) {
    const b = list[i++] as number;
    first += (b & 0x7f) * scale;
    scale *= 128;
    if (b < 0x80) break;
  }
  const id = base + first - 1;
  const length = varintBytes(id) + list.length - i;
  const out = scratch && scratch.length >= length ? scratch.subarray(0, length) : new Uint8Array(length);
  const at = putVarint(out, 0, id);
  out.set(list.subarray(i), at);
  return out;
}

/** Lists joined as one (they hold ids of different rows, in the order given): what a merge stores. */
export function joinLists(lists: readonly Uint8Array[]): Uint8Array {
  if (lists.length === 1) return lists[0] as Uint8Array;
  let length = lists.length - 1;
  for (const l of lists) length += l.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const [i, l] of lists.entries()) {
    if (i > 0) out[at++] = 0;
    out.set(l, at);
    at += l.length;
  }
  return out;
}

/** The ids of these lists (a key's, one per segment), ascending. */
export function decodeLists(lists: readonly Uint8Array[]): Float64Array {
  let most = 0;
  for (const l of lists) most += l.length;
  // At most one id per byte.
  const ids = new Float64Array(most);
  let n = 0;
  let sorted = true;
  let last = 0;
  for (const l of lists) {
    let previous = 0;
    let i = 0;
    while (i < l.length) {
      let b = l[i++] as number;
      let v = b & 0x7f;
      for (let scale = 128; b >= 0x80; scale *= 128) {
        b = l[i++] as number;
        v += (b & 0x7f) * scale;
      }
      if (v === 0) {
        previous = 0;
        continue;
      }
      previous += v;
      if (previous <= last) sorted = false;
      last = previous;
      ids[n++] = previous;
    }
  }
  const out = ids.subarray(0, n);
  // Segments are read in the order of their first ids, so this is rare: sorted and deduplicated here.
  return sorted ? out : dedupe(out.sort());
}

function dedupe(sorted: Float64Array): Float64Array {
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i] as number;
  return sorted.subarray(0, n);
}

/** The ids in both ascending lists. */
export function intersect(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(Math.min(a.length, b.length));
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      out[n++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, n);
}

/** The ids in either ascending list. */
export function union(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? (a[i] as number) : Infinity;
    const y = j < b.length ? (b[j] as number) : Infinity;
    if (x <= y) {
      out[n++] = x;
      i++;
      if (x === y) j++;
    } else {
      out[n++] = y;
      j++;
    }
  }
  return out.subarray(0, n);
}

/** What a query requires of a text's keys: a key, all of some, or any of some. */
export type PostingQuery = number | { and: PostingQuery[] } | { or: PostingQuery[] };

/**
 * Candidates this few are not narrowed further: scanning them costs less than decoding another
 * list (a common trigram's is ~1 byte per text of the tree).
 */
const ENOUGH = 8;

/** How a query reads the stored lists of a key: their bytes alone (cheap), or the lists. */
export interface PostingReader {
  bytes(key: number): number;
  lists(key: number): Uint8Array[];
}

/**
 * The ids a query may match (a superset: the scan decides). A conjunction reads its keys rarest
 * first, by their lists' bytes, and stops once few candidates are left: a rare literal's trigrams
 * are mostly common ones, whose lists (~1 byte per text of the tree) are then never read.
 */
export function evaluate(query: PostingQuery, read: PostingReader): Float64Array {
  if (typeof query === "number") return decodeLists(read.lists(query));
  if ("or" in query) {
    let out: Float64Array = new Float64Array(0);
    for (const q of query.or) out = union(out, evaluate(q, read));
    return out;
  }
  const leaves = query.and
    .filter((q): q is number => typeof q === "number")
    .map((key) => ({ key, bytes: read.bytes(key) }))
    .sort((a, b) => a.bytes - b.bytes);
  let out: Float64Array | undefined;
  for (const { key } of leaves) {
    const ids = decodeLists(read.lists(key));
    out = out === undefined ? ids : intersect(out, ids);
    if (out.length <= ENOUGH) return out;
  }
  for (const q of query.and) {
    if (typeof q === "number") continue;
    const ids = evaluate(q, read);
    out = out === undefined ? ids : intersect(out, ids);
    if (out.length <= ENOUGH) return out;
  }
  return out ?? new Float64Array(0);
}
