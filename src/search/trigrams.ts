// The trigram scheme the content index stores and queries: text folded per UTF-16 unit (ASCII
// letters to lower case, plus the Kelvin sign and long s, which RE2 folds into k and s), every
// distinct three-unit window of a text one posting key (trigram-token.ts).

import { isAscii } from "node:buffer";
import { POSTING_KEYS, widePostingKey } from "./trigram-token.js";

const FOLD = new Uint16Array(65536);
for (let u = 0; u < 65536; u++) FOLD[u] = u;
for (let u = 0x41; u <= 0x5a; u++) FOLD[u] = u + 32;
FOLD[0x212a] = 0x6b; // KELVIN SIGN → k
FOLD[0x17f] = 0x73; // LATIN SMALL LETTER LONG S → s

/** The folded form of a text: the same length, unit for unit, so a substring folds to a substring. */
export function foldText(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const u = text.charCodeAt(i);
    const f = FOLD[u] as number;
    if (f !== u) {
      out += text.slice(from, i) + String.fromCharCode(f);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

// Last document each posting key was seen in: dedupes without a Set (one array write per unit).
// Process-wide on purpose (these tables): scratch buffers each used within one synchronous call,
// not state kept for any caller. Allocated on first use (12 MB), not when a command that never
// indexes (afs fs cat opens the text index) loads this module.
let seenTable: Int32Array | undefined;
let documentSerial = 0;

const seenScratch = (): Int32Array => {
  seenTable ??= new Int32Array(POSTING_KEYS);
  return seenTable;
};

/** A fresh mark for one document's pass over the seen table; the table is cleared when marks wrap. */
function nextSerial(): number {
  if (++documentSerial === 0x7fffffff) {
    seenTable?.fill(0);
    documentSerial = 1;
  }
  return documentSerial;
}

// One document's keys, grown to the largest document met (at most one key per input unit, and
// POSTING_KEYS distinct): what the documents below return a view of.
let keyScratch: Uint32Array | undefined;

function keyBuffer(length: number): Uint32Array {
  const need = Math.min(Math.max(length - 2, 0), POSTING_KEYS);
  if (keyScratch === undefined || keyScratch.length < need) {
    keyScratch = new Uint32Array(Math.max(need, 2 * (keyScratch?.length ?? 0), 16 * 1024));
  }
  return keyScratch;
}

const NO_KEYS = new Uint32Array(0);

/**
 * The distinct posting keys (trigram-token.ts) of a text: what the index stores for it. A view of
 * a scratch buffer, valid until the next document is made (the index copies it at once).
 * Synchronous and not re-entrant: it shares one scratch table between calls.
 */
export function trigramKeysOf(text: string): Uint32Array {
  if (text.length < 3) return NO_KEYS;
  const serial = nextSerial();
  const seenIn = seenScratch();
  const out = keyBuffer(text.length);
  let n = 0;
  let a = FOLD[text.charCodeAt(0)] as number;
  let b = FOLD[text.charCodeAt(1)] as number;
  for (let i = 2; i < text.length; i++) {
    const c = FOLD[text.charCodeAt(i)] as number;
    const key = (a | b | c) < 128 ? (a << 14) | (b << 7) | c : widePostingKey(a, b, c);
    if (seenIn[key] !== serial) {
      seenIn[key] = serial;
      out[n++] = key;
    }
    a = b;
    b = c;
  }
  return out.subarray(0, n);
}

/**
 * trigramKeysOf for text that is all ASCII, read from its bytes (each byte one UTF-16 unit): the
 * same keys in the same order, with no decode. Same scratch buffers, same rules.
 */
export function asciiTrigramKeys(bytes: Uint8Array): Uint32Array {
  if (bytes.length < 3) return NO_KEYS;
  const serial = nextSerial();
  const seenIn = seenScratch();
  const out = keyBuffer(bytes.length);
  let n = 0;
  let a = FOLD[bytes[0] as number] as number;
  let b = FOLD[bytes[1] as number] as number;
  for (let i = 2; i < bytes.length; i++) {
    const c = FOLD[bytes[i] as number] as number;
    const key = (a << 14) | (b << 7) | c;
    if (seenIn[key] !== serial) {
      seenIn[key] = serial;
      out[n++] = key;
    }
    a = b;
    b = c;
  }
  return out.subarray(0, n);
}

/**
 * Bits in the Bloom filter of one block's trigrams: 2 KiB per 16 KiB block, an eighth of the text.
 * A dense block of minified code holds ~5,000 distinct trigrams: a false positive for one trigram
 * is then ~18%, for the 8 of a 10-letter literal ~1e-6.
 */
export const BLOOM_BITS = 1 << 14;
export const BLOOM_BYTES = BLOOM_BITS / 8;
const BLOOM_MASK = BLOOM_BITS - 1;

/** Two bit positions (the low and high halves) for a trigram key (ASCII or wide), from one mixed 32-bit hash. */
function bloomHash(key: number): number {
  let h = key < 4294967296 ? key : (key % 4294967296) ^ Math.imul(Math.floor(key / 4294967296), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) >>> 0;
}

function bloomAdd(blooms: Uint8Array, base: number, key: number): void {
  const h = bloomHash(key);
  const b1 = h & BLOOM_MASK;
  const b2 = (h >>> 16) & BLOOM_MASK;
  const i1 = base + (b1 >>> 3);
  const i2 = base + (b2 >>> 3);
  blooms[i1] = (blooms[i1] as number) | (1 << (b1 & 7));
  blooms[i2] = (blooms[i2] as number) | (1 << (b2 & 7));
}

/** Whether block `block`'s filter may hold this trigram key (never false for one it holds). */
export function bloomHas(blooms: Uint8Array, block: number, key: number): boolean {
  return bloomHasProbe(blooms, block * BLOOM_BYTES, bloomProbe(key));
}

/** A key's two bits in a block's filter, as byte offset and mask each: what bloomHasProbe tests. */
export type BloomProbe = readonly [number, number, number, number];

export function bloomProbe(key: number): BloomProbe {
  const h = bloomHash(key);
  const b1 = h & BLOOM_MASK;
  const b2 = (h >>> 16) & BLOOM_MASK;
  return [b1 >>> 3, 1 << (b1 & 7), b2 >>> 3, 1 << (b2 & 7)];
}

/** bloomHas for a probe worked out once, on the filter starting at byte `base`. */
export function bloomHasProbe(blooms: Uint8Array, base: number, p: BloomProbe): boolean {
  return ((blooms[base + p[0]] as number) & p[1]) !== 0 && ((blooms[base + p[2]] as number) & p[3]) !== 0;
}

/**
 * The posting keys of a text cut into blocks (`bounds`, byte offsets at line starts), plus a Bloom
 * filter per block of the trigrams within it. Trigrams across a block boundary hold a line end,
 * which no literal a line matches holds, so they are left out. ASCII blocks are read as bytes.
 * The keys are a scratch view, as trigramKeysOf's.
 */
export function blockedTrigramKeys(
  data: Uint8Array,
  bounds: readonly number[],
): { keys: Uint32Array; blooms: Uint8Array } {
  const serial = nextSerial();
  const seenIn = seenScratch();
  inBlockTable ??= new Int32Array(1 << 21);
  const inBlock = inBlockTable;
  const out = keyBuffer(data.length);
  let n = 0;
  const blooms = new Uint8Array((bounds.length - 1) * BLOOM_BYTES);
  const decoder = new TextDecoder();
  // A key's first sight in a block sets its filter bits; its first in the text adds it.
  const ascii = (key: number, base: number): void => {
    if (inBlock[key] === blockSerial) return;
    inBlock[key] = blockSerial;
    bloomAdd(blooms, base, key);
    if (seenIn[key] !== serial) {
      seenIn[key] = serial;
      out[n++] = key;
    }
  };
  for (let k = 0; k + 1 < bounds.length; k++) {
    if (++blockSerial === 0x7fffffff) {
      inBlock.fill(0);
      blockSerial = 1;
    }
    const base = k * BLOOM_BYTES;
    const block = data.subarray(bounds[k], bounds[k + 1]);
    if (block.length < 3) continue;
    if (isAscii(block)) {
      let a = FOLD[block[0] as number] as number;
      let b = FOLD[block[1] as number] as number;
      // The hot loop: ascii() written out, as V8 did not inline it here.
      const bs = blockSerial;
      for (let i = 2; i < block.length; i++) {
        const c = FOLD[block[i] as number] as number;
        const key = (a << 14) | (b << 7) | c;
        a = b;
        b = c;
        if (inBlock[key] === bs) continue;
        inBlock[key] = bs;
        bloomAdd(blooms, base, key);
        if (seenIn[key] !== serial) {
          seenIn[key] = serial;
          out[n++] = key;
        }
      }
      continue;
    }
    const units = decoder.decode(block);
    let a = FOLD[units.charCodeAt(0)] as number;
    let b = FOLD[units.charCodeAt(1)] as number;
    for (let i = 2; i < units.length; i++) {
      const c = FOLD[units.charCodeAt(i)] as number;
      if ((a | b | c) < 128) ascii((a << 14) | (b << 7) | c, base);
      else {
        // The filter takes the exact wide key (trigramKeys), the postings its hashed key.
        bloomAdd(blooms, base, a * 4294967296 + b * 65536 + c);
        const key = widePostingKey(a, b, c);
        if (seenIn[key] !== serial) {
          seenIn[key] = serial;
          out[n++] = key;
        }
      }
      a = b;
      b = c;
    }
  }
  return { keys: out.subarray(0, n), blooms };
}

// Last block each ASCII trigram was seen in, for blockedTrigramDocument (allocated on first use).
let inBlockTable: Int32Array | undefined;
let blockSerial = 0;

/** The keys of every trigram of an already folded literal, as blockedTrigramDocument hashes them. */
export function trigramKeys(folded: string): number[] {
  const keys: number[] = [];
  for (let i = 0; i + 2 < folded.length; i++) {
    const a = folded.charCodeAt(i);
    const b = folded.charCodeAt(i + 1);
    const c = folded.charCodeAt(i + 2);
    keys.push((a | b | c) < 128 ? (a << 14) | (b << 7) | c : a * 4294967296 + b * 65536 + c);
  }
  return keys;
}
