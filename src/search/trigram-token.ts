// The index's key for one trigram (see trigrams.ts), what its posting lists are filed under: an
// all-ASCII trigram's own 21-bit key ((a << 14) | (b << 7) | c), any other's hashed into
// WIDE_BUCKETS keys above those. Two wide trigrams sharing a key only make a text a candidate the
// scan then rules out; a bounded key space lets the indexer count keys in a flat table.

export const WIDE_BASE = 1 << 21;
export const WIDE_BUCKETS = 1 << 20;
/** Every posting key is below this. */
export const POSTING_KEYS = WIDE_BASE + WIDE_BUCKETS;

/** The posting key of a trigram of UTF-16 units a, b, c (folded), not all ASCII. */
export function widePostingKey(a: number, b: number, c: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b ^ 0x5bd1e995, 0x85ebca77) ^ Math.imul(c, 0xc2b2ae3d);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return WIDE_BASE + ((h ^ (h >>> 15)) & (WIDE_BUCKETS - 1));
}

/** The distinct posting keys of an already folded literal (at most `max`, spread across it). */
export function literalKeys(folded: string, max = 16): number[] {
  const keys = new Set<number>();
  for (let i = 0; i + 2 < folded.length; i++) {
    const a = folded.charCodeAt(i);
    const b = folded.charCodeAt(i + 1);
    const c = folded.charCodeAt(i + 2);
    keys.add((a | b | c) < 128 ? (a << 14) | (b << 7) | c : widePostingKey(a, b, c));
  }
  const all = [...keys];
  if (all.length <= max) return all;
  // Any subset is still required; the ends and an even spread keep it selective.
  return Array.from({ length: max }, (_, i) => all[Math.round((i * (all.length - 1)) / (max - 1))] as number);
}
