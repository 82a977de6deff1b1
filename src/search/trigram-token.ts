// The index's name for one trigram (see trigrams.ts): an all-ASCII trigram's 21-bit key as five
// base-36 digits, any other as "x" + ten digits. Worked out per call, so a query's few tokens cost
// nothing like the table of every ASCII token that indexing fills.

const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";

/** An all-ASCII trigram's key ((a << 14) | (b << 7) | c) as its five-digit token. */
export function asciiTrigramToken(key: number): string {
  let token = "";
  for (let k = key, i = 0; i < 5; i++, k = Math.floor(k / 36)) token += DIGITS[k % 36];
  return token;
}

/** Any other trigram's key (a * 2^32 + b * 2^16 + c) as its eleven-character token, so lengths never collide. */
export const wideTrigramToken = (key: number): string => `x${key.toString(36).padStart(10, "0")}`;

/** The distinct trigram tokens of an already folded literal (at most `max`, spread across it). */
export function literalTokens(folded: string, max = 16): string[] {
  const tokens = new Set<string>();
  for (let i = 0; i + 2 < folded.length; i++) {
    const a = folded.charCodeAt(i);
    const b = folded.charCodeAt(i + 1);
    const c = folded.charCodeAt(i + 2);
    tokens.add(
      (a | b | c) < 128
        ? asciiTrigramToken((a << 14) | (b << 7) | c)
        : wideTrigramToken(a * 4294967296 + b * 65536 + c),
    );
  }
  const all = [...tokens];
  if (all.length <= max) return all;
  // Any subset is still required; the ends and an even spread keep it selective.
  return Array.from({ length: max }, (_, i) => all[Math.round((i * (all.length - 1)) / (max - 1))] as string);
}
