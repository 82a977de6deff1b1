// Words for keyword search: identifiers split into their parts (parseConfig → parse config) plus
// the whole identifier, lowercased, so natural-language queries and exact identifiers both match.
// The same functions tokenize documents and queries, whichever index ranks them.

/** Words too common to rank by; dropped from queries (documents keep them, for phrases). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be by can do does for from how i in is it its of on or that the this to what when where which who why with".split(
    " ",
  ),
);

const IDENTIFIER = /[\p{L}\p{N}_]+/gu;
const PART = /[\p{L}\p{N}]+/gu;

/** An identifier's lowercase parts: camelCase, PascalCase, ALLCaps runs and snake_case split. */
export function identifierParts(word: string): string[] {
  const split = word.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2");
  return split.toLowerCase().match(PART) ?? [];
}

/**
 * Tokens of a text in order. An identifier with several parts yields the joined whole first, then
 * the parts ("parseConfig" → parseconfig parse config), so a phrase of parts still matches in order.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of text.match(IDENTIFIER) ?? []) {
    const parts = identifierParts(word);
    if (parts.length > 1) out.push(parts.join(""));
    for (const p of parts) out.push(p);
  }
  return out;
}

/** A keyword search: words ranked by BM25 (any may match), quoted phrases, and excluded words. */
export interface KeywordQuery {
  /** Single words; a chunk needs only one of them (or a phrase) to be a candidate. */
  terms: string[];
  /** Each phrase is its tokens, which must appear consecutively. */
  phrases: string[][];
  /** A chunk holding any of these (each a token sequence) is left out. */
  excludes: string[][];
}

/**
 * Parses keyword syntax: plain words, "quoted phrases" and -excluded words or -"phrases".
 * Stop words are dropped from the plain words unless nothing else would remain.
 */
export function parseKeywordQuery(text: string): KeywordQuery {
  const terms: string[] = [];
  const phrases: string[][] = [];
  const excludes: string[][] = [];
  const common: string[] = [];
  for (const m of text.matchAll(/(^|\s)(-?)"([^"]*)"?|(\S+)/gu)) {
    const negated = m[2] === "-";
    const quoted = m[3];
    if (quoted !== undefined) {
      const tokens = tokenize(quoted);
      if (tokens.length === 0) continue;
      if (negated) excludes.push(tokens);
      else if (tokens.length === 1) terms.push(tokens[0] as string);
      else phrases.push(tokens);
      continue;
    }
    const word = m[4] ?? "";
    if (word.startsWith("-") && word.length > 1) {
      const tokens = tokenize(word.slice(1));
      if (tokens.length > 0) excludes.push(tokens);
      continue;
    }
    for (const t of tokenize(word)) (STOP_WORDS.has(t) ? common : terms).push(t);
  }
  const words = terms.length > 0 || phrases.length > 0 ? terms : common;
  return { terms: [...new Set(words)], phrases: dedupe(phrases), excludes: dedupe(excludes) };
}

function dedupe(lists: string[][]): string[][] {
  const seen = new Set<string>();
  return lists.filter((l) => {
    const key = l.join(" ");
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Every token a query looks for (its words and phrase words), for picking snippet lines. */
export const queryWords = (q: KeywordQuery): Set<string> => new Set([...q.terms, ...q.phrases.flat()]);
