// BM25 in memory, for volumes without a persistent index (a plain directory is split and ranked
// per query). Mirrors SQLite FTS5's bm25(): k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5))
// floored at 1e-6, summed over the query's terms and phrases; statistics over the documents given.
import type { KeywordQuery } from "./words.js";

const K1 = 1.2;
const B = 0.75;

export interface Bm25Doc {
  tokens: readonly string[];
}

/** Documents matching any term or phrase and no exclusion, with their scores, best first. */
export function bm25Rank<T extends Bm25Doc>(docs: readonly T[], q: KeywordQuery): { doc: T; score: number }[] {
  const phrases = [...q.terms.map((t) => [t]), ...q.phrases];
  if (phrases.length === 0 || docs.length === 0) return [];
  const counts = docs.map((d) => phrases.map((p) => occurrences(d.tokens, p)));
  const n = phrases.map((_, i) => counts.reduce((sum, c) => sum + ((c[i] as number) > 0 ? 1 : 0), 0));
  const idf = n.map((k) => Math.max(1e-6, Math.log((docs.length - k + 0.5) / (k + 0.5))));
  const avg = docs.reduce((sum, d) => sum + d.tokens.length, 0) / docs.length || 1;
  const out: { doc: T; score: number }[] = [];
  for (const [i, doc] of docs.entries()) {
    const c = counts[i] as number[];
    if (!c.some((f) => f > 0)) continue;
    if (q.excludes.some((e) => occurrences(doc.tokens, e) > 0)) continue;
    const norm = K1 * (1 - B + (B * doc.tokens.length) / avg);
    let score = 0;
    for (const [j, f] of c.entries()) if (f > 0) score += ((idf[j] as number) * f * (K1 + 1)) / (f + norm);
    out.push({ doc, score });
  }
  return out.sort((a, b) => b.score - a.score);
}

/** How often `seq` occurs in `tokens` as a run of consecutive tokens. */
function occurrences(tokens: readonly string[], seq: readonly string[]): number {
  let count = 0;
  const first = seq[0];
  for (let i = 0; i + seq.length <= tokens.length; i++) {
    if (tokens[i] !== first) continue;
    let j = 1;
    while (j < seq.length && tokens[i + j] === seq[j]) j++;
    if (j === seq.length) count++;
  }
  return count;
}
