// Words for keyword search: identifiers split into their lowercase parts (parseConfig → parse
// config), so natural-language queries find code; a query's identifier also searches the phrase of
// its parts, so the exact name ranks first. The same functions serve documents and queries.

/** Words too common to rank by; dropped from queries (documents keep them, for phrases). */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  "a an and are as at be by can do does for from how i in is it its of on or that the this to what when where which who why with".split(
    " ",
  ),
);

const IDENTIFIER = /[\p{L}\p{N}_]+/gu;
const PART = /[\p{L}\p{N}]+/gu;

/** An identifier's lowercase parts: camelCase, PascalCase, ALLCaps runs and snake_case split. */
function identifierParts(word: string): string[] {
  const split = word.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2");
  return split.toLowerCase().match(PART) ?? [];
}

/** Tokens of a text in order: each identifier's parts ("parseConfig HTTPServer" → parse config http server). */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const word of text.match(IDENTIFIER) ?? []) {
    if (LOWER_WORD.test(word)) out.push(word);
    else if (ASCII_WORD.test(word)) asciiParts(word, out);
    else {
      const parts = identifierParts(word);
      for (const p of parts) out.push(p);
    }
  }
  return out;
}

// Fast paths (indexing speed is mostly tokenizing): plain lowercase words, and ASCII identifiers
// split by hand the way identifierParts splits them.
const LOWER_WORD = /^[a-z0-9]+$/;
const ASCII_WORD = /^[A-Za-z0-9_]+$/;

/** 1 lowercase, 2 uppercase, 3 digit, 0 underscore (or the end). */
const kind = (c: number): number => (c >= 97 && c <= 122 ? 1 : c >= 65 && c <= 90 ? 2 : c >= 48 && c <= 57 ? 3 : 0);

function asciiParts(word: string, out: string[]): void {
  const parts: string[] = [];
  let start = -1;
  for (let i = 0; i <= word.length; i++) {
    const k = i < word.length ? kind(word.charCodeAt(i)) : 0;
    if (k === 0) {
      if (start >= 0) parts.push(word.slice(start, i).toLowerCase());
      start = -1;
      continue;
    }
    if (start < 0) {
      start = i;
      continue;
    }
    const prev = kind(word.charCodeAt(i - 1));
    const next = i + 1 < word.length ? kind(word.charCodeAt(i + 1)) : 0;
    // lower or digit → Upper ("parseConfig", "x2Y"); Upper → Upper lower ("HTTPServer").
    if (k === 2 && (prev === 1 || prev === 3 || (prev === 2 && next === 1))) {
      parts.push(word.slice(start, i).toLowerCase());
      start = i;
    }
  }
  for (const p of parts) out.push(p);
}

/** A keyword search: words ranked by BM25 (any may match), quoted phrases, and excluded words. */
export interface KeywordQuery {
  /** Single words; a passage needs only one of them (or a phrase) to be a candidate. */
  terms: string[];
  /** Each phrase is its tokens, which must appear consecutively. */
  phrases: string[][];
  /** A passage holding any of these (each a token sequence) is left out. */
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
    const tokens = tokenize(word);
    for (const t of tokens) (STOP_WORDS.has(t) ? common : terms).push(t);
    // An identifier also counts as the phrase of its parts, so the exact name ranks first.
    if (tokens.length > 1 && /^[\p{L}\p{N}_]+$/u.test(word)) phrases.push(tokens);
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
