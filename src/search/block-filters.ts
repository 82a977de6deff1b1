// Which blocks of a large text may hold a match, from the Bloom filter of each block's trigrams
// (trigrams.ts): a filter per block as stored (block-major), and, once a text's filters are asked
// again, the same bits transposed (a bit set of blocks per filter bit), so a literal's test costs a
// few words per bit instead of a cache miss per block. A text of many blocks is stored transposed,
// in bands of filter bits, so a new process reads only the bands a query's bits fall in.

import type { LiteralQuery } from "./text-index.js";
import { BLOOM_BITS, BLOOM_BYTES, type BloomProbe, bloomHasProbe, bloomProbe, trigramKeys } from "./trigrams.js";

/** A query with each literal's trigrams as Bloom probes, worked out once per search rather than per block. */
export type ProbeTree = { op: "all" } | { op: "lit"; probes: BloomProbe[] } | { op: "and" | "or"; of: ProbeTree[] };

export function queryProbes(query: LiteralQuery): ProbeTree {
  switch (query.op) {
    case "all":
      return query;
    case "lit":
      return { op: "lit", probes: trigramKeys(query.folded).map(bloomProbe) };
    case "and":
    case "or":
      return { op: query.op, of: query.of.map(queryProbes) };
  }
}

/** Asks after which a text's filters are transposed: one search pays nothing for it, a warm process gains. */
const TRANSPOSE_AFTER = 2;
/** Texts of fewer blocks stay block-major (their transposed form would be larger, and their test is cheap); more are stored in bands. */
export const TRANSPOSE_MIN_BLOCKS = 64;
/** Filter bits per band of transposed filters: a probe's bit is read with the 63 beside it. */
const BAND_BITS = 64;
export const BANDS = BLOOM_BITS / BAND_BITS;

export class BlockFilters {
  private asked = 0;
  /**
   * Band j holds columns 64j … 64j + 63, each `words` words: bit b of word w of column i is filter
   * bit i of block 32w + b. Null until transposed; a band not loaded yet is undefined.
   */
  private bands: (Uint32Array | undefined)[] | null = null;
  private readonly words: number;

  /** `rows`: the filters of `blocks` blocks, BLOOM_BYTES each, as stored; null for banded(). */
  constructor(
    private rows: Uint8Array | null,
    readonly blocks: number,
  ) {
    this.words = Math.ceil(blocks / 32);
  }

  /** Filters stored in bands (bandsOf), none loaded yet: see bandsToLoad and addBand. */
  static banded(blocks: number): BlockFilters {
    const filters = new BlockFilters(null, blocks);
    filters.bands = new Array<Uint32Array | undefined>(BANDS);
    return filters;
  }

  /** Bytes held, for a cache's budget. */
  get bytes(): number {
    if (!this.bands) return this.rows?.byteLength ?? 0;
    return this.bands.reduce((n, band) => n + (band?.byteLength ?? 0), 0);
  }

  /** Bytes of one band: what addBand takes. */
  get bandBytes(): number {
    return BAND_BITS * this.words * 4;
  }

  /**
   * The bands to load before matching `q`: those its bits fall in, or, asked again, all those
   * missing (a warm process then reads the text's filters once, as it would read its rows).
   */
  bandsToLoad(q: ProbeTree): number[] {
    if (!this.bands) return [];
    const bands = this.bands;
    const wanted = this.asked + 1 >= TRANSPOSE_AFTER ? bands.keys() : bandsOfQuery(q);
    return [...wanted].filter((j) => bands[j] === undefined);
  }

  addBand(band: number, bits: Uint32Array): void {
    if (!this.bands || bits.length !== BAND_BITS * this.words) throw new Error("not a band of these filters");
    this.bands[band] = bits;
  }

  /** The blocks whose filters may satisfy the query (never leaving out one whose text does), ascending. */
  matching(q: ProbeTree): number[] {
    if (++this.asked >= TRANSPOSE_AFTER && this.blocks >= TRANSPOSE_MIN_BLOCKS && !this.bands) this.transpose();
    return this.bands ? this.byColumns(q) : this.byRows(q);
  }

  private byRows(q: ProbeTree): number[] {
    const rows = this.rows as Uint8Array;
    const out: number[] = [];
    const bits = conjunction(q);
    if (bits === null) {
      for (let b = 0; b < this.blocks; b++) if (mayHold(rows, b * BLOOM_BYTES, q)) out.push(b);
      return out;
    }
    // Every bit required (a literal, or an AND of them): one flat loop per block, stopping at the first clear bit.
    for (let b = 0, base = 0; b < this.blocks; b++, base += BLOOM_BYTES) {
      let j = 0;
      while (j < bits.length && ((rows[base + (bits[j] as number)] as number) & (bits[j + 1] as number)) !== 0) j += 2;
      if (j === bits.length) out.push(b);
    }
    return out;
  }

  private byColumns(q: ProbeTree): number[] {
    const set = this.blockSet(q);
    const out: number[] = [];
    for (let w = 0; w < this.words; w++) {
      for (let v = set[w] as number; v !== 0; v &= v - 1) {
        const b = w * 32 + (31 - Math.clz32(v & -v));
        if (b < this.blocks) out.push(b);
      }
    }
    return out;
  }

  /** The blocks that may satisfy `q`, as a bit set. */
  private blockSet(q: ProbeTree): Uint32Array {
    const bands = this.bands as (Uint32Array | undefined)[];
    const words = this.words;
    const out = new Uint32Array(words);
    switch (q.op) {
      case "all":
        return out.fill(0xffffffff);
      case "lit": {
        out.fill(0xffffffff);
        for (const p of q.probes) {
          for (let k = 0; k < 4; k += 2) {
            const bit = probeBit(p, k);
            const cols = bands[bit >>> 6] as Uint32Array;
            const start = (bit & (BAND_BITS - 1)) * words;
            for (let w = 0; w < words; w++) out[w] = (out[w] as number) & (cols[start + w] as number);
          }
        }
        return out;
      }
      case "and": {
        out.fill(0xffffffff);
        for (const part of q.of) {
          const s = this.blockSet(part);
          for (let w = 0; w < words; w++) out[w] = (out[w] as number) & (s[w] as number);
        }
        return out;
      }
      case "or": {
        for (const part of q.of) {
          const s = this.blockSet(part);
          for (let w = 0; w < words; w++) out[w] = (out[w] as number) | (s[w] as number);
        }
        return out;
      }
    }
  }

  private transpose(): void {
    this.bands = splitBands(transposed(this.rows as Uint8Array, this.blocks), this.words);
    this.rows = null;
  }
}

/** Every filter bit as a bit set of blocks: `words` words per bit, bit after bit. */
function transposed(rows: Uint8Array, blocks: number): Uint32Array {
  const words = Math.ceil(blocks / 32);
  const cols = new Uint32Array(BLOOM_BITS * words);
  for (let b = 0; b < blocks; b++) {
    const base = b * BLOOM_BYTES;
    const word = b >>> 5;
    const bit = 1 << (b & 31);
    for (let o = 0; o < BLOOM_BYTES; o++) {
      const v = rows[base + o] as number;
      if (v === 0) continue;
      for (let j = 0; j < 8; j++)
        if ((v >> j) & 1) cols[(o * 8 + j) * words + word] = (cols[(o * 8 + j) * words + word] as number) | bit;
    }
  }
  return cols;
}

const splitBands = (cols: Uint32Array, words: number): Uint32Array[] =>
  Array.from({ length: BANDS }, (_, j) => cols.subarray(j * BAND_BITS * words, (j + 1) * BAND_BITS * words));

/** The filters of `blocks` blocks (rows as stored) transposed, band by band: what BlockFilters.banded loads. */
export function bandsOf(rows: Uint8Array, blocks: number): Uint32Array[] {
  return splitBands(transposed(rows, blocks), Math.ceil(blocks / 32));
}

/** Filter bit k/2 of a probe (k = 0 or 2), counted from the filter's start. */
const probeBit = (p: BloomProbe, k: number): number => (p[k] as number) * 8 + 31 - Math.clz32(p[k + 1] as number);

/** The bands the bits of a query's probes fall in. */
function bandsOfQuery(q: ProbeTree): Set<number> {
  const out = new Set<number>();
  const visit = (p: ProbeTree): void => {
    if (p.op === "lit") for (const x of p.probes) for (let k = 0; k < 4; k += 2) out.add(probeBit(x, k) >>> 6);
    else if (p.op !== "all") for (const part of p.of) visit(part);
  };
  visit(q);
  return out;
}

const conjunctions = new WeakMap<ProbeTree, Int32Array | null>();

/** When the query is an AND of literals (the usual case), every bit it needs as (byte offset, mask) pairs; null when it has an OR. */
function conjunction(q: ProbeTree): Int32Array | null {
  let bits = conjunctions.get(q);
  if (bits === undefined) {
    const pairs: number[] = [];
    const flatten = (p: ProbeTree): boolean => {
      if (p.op === "all") return true;
      if (p.op === "lit") {
        for (const x of p.probes) pairs.push(x[0], x[1], x[2], x[3]);
        return true;
      }
      return p.op === "and" && p.of.every(flatten);
    };
    bits = flatten(q) ? Int32Array.from(pairs) : null;
    conjunctions.set(q, bits);
  }
  return bits;
}

/** Whether the block filter at `base` may satisfy the query (never false when the block's text does). */
function mayHold(rows: Uint8Array, base: number, q: ProbeTree): boolean {
  switch (q.op) {
    case "all":
      return true;
    case "lit":
      for (const p of q.probes) if (!bloomHasProbe(rows, base, p)) return false;
      return true;
    case "and":
      return q.of.every((p) => mayHold(rows, base, p));
    case "or":
      return q.of.some((p) => mayHold(rows, base, p));
  }
}
