// The BERT tokenizer sentence-transformers models expect: the basic pass (clean, split CJK,
// lowercase, strip accents, split punctuation) then greedy longest-match WordPiece, as Hugging
// Face's BertTokenizer.

export interface WordPieceOptions {
  /** Token → id, as vocab.txt lists them (line number = id). */
  vocab: ReadonlyMap<string, number>;
  lowerCase: boolean;
  /** Remove combining marks after NFD; BERT ties it to lowerCase unless configured. */
  stripAccents: boolean;
  /** Put spaces around CJK ideographs so each is a word of its own. */
  splitChinese: boolean;
  /** Most ids one encoded text may hold, [CLS] and [SEP] included. */
  maxLength: number;
  unknown: string;
  cls: string;
  sep: string;
  pad: string;
  /** Prefix of a piece that continues a word; "##" in BERT vocabularies. */
  continuation: string;
  /** Longer words become the unknown token whole (as in BERT). */
  maxWordChars: number;
}

export const BERT_DEFAULTS = {
  lowerCase: true,
  stripAccents: true,
  splitChinese: true,
  maxLength: 512,
  unknown: "[UNK]",
  cls: "[CLS]",
  sep: "[SEP]",
  pad: "[PAD]",
  continuation: "##",
  maxWordChars: 100,
} as const satisfies Omit<WordPieceOptions, "vocab">;

/** vocab.txt: one token per line, its id the line number. */
export function parseVocab(text: string): Map<string, number> {
  const vocab = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((token, id) => {
    if (!vocab.has(token)) vocab.set(token, id);
  });
  return vocab;
}

// Python's unicodedata categories, as BERT's _is_control / _is_whitespace / _is_punctuation use them.
const DROPPED = /[\0\uFFFD]|(?![\t\n\r])\p{C}/gu;
// Python's str.split() also breaks at line and paragraph separators, which cleaning keeps.
const NOT_SEPARATOR = /[^\t\n\r\p{Zs}\u2028\u2029]+/gu;
const CJK =
  /([\u{4E00}-\u{9FFF}\u{3400}-\u{4DBF}\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B820}-\u{2CEAF}\u{F900}-\u{FAFF}\u{2F800}-\u{2FA1F}])/gu;
const COMBINING = /\p{Mn}/gu;
// BERT counts every non-alphanumeric ASCII printable as punctuation, plus Unicode's P* categories.
const PUNCTUATION = /([!-/:-@[-`{-~]|\p{P})/u;

const CACHE_LIMIT = 50_000;

export class WordPieceTokenizer {
  readonly options: WordPieceOptions;
  private readonly ids: { unknown: number; cls: number; sep: number; pad: number };
  private readonly longestPiece: number;
  private readonly cache = new Map<string, readonly number[]>();

  constructor(options: WordPieceOptions) {
    this.options = options;
    const id = (token: string): number => {
      const found = options.vocab.get(token);
      if (found === undefined) throw new Error(`the vocabulary has no ${token} token`);
      return found;
    };
    this.ids = { unknown: id(options.unknown), cls: id(options.cls), sep: id(options.sep), pad: id(options.pad) };
    let longest = 0;
    for (const token of options.vocab.keys()) longest = Math.max(longest, [...token].length);
    this.longestPiece = longest;
  }

  get padId(): number {
    return this.ids.pad;
  }

  /** The words of the basic pass, before WordPiece. */
  basicTokens(text: string): string[] {
    return [...this.words(text)];
  }

  /**
   * Word by word, so encode stops reading once maxLength is reached (a passage of several KiB usually
   * fills 256 tokens within its first KiB). Separators are what BERT's cleaning turns into spaces.
   */
  private *words(text: string): Generator<string> {
    const o = this.options;
    for (const [raw] of text.matchAll(NOT_SEPARATOR)) {
      let clean = raw.replace(DROPPED, "");
      if (o.splitChinese) clean = clean.replace(CJK, " $1 ");
      for (const piece of clean.normalize("NFC").split(" ")) {
        if (piece === "") continue;
        let word = o.lowerCase ? piece.toLowerCase() : piece;
        if (o.stripAccents) word = word.normalize("NFD").replace(COMBINING, "");
        for (const part of word.split(PUNCTUATION)) if (part !== "") yield part;
      }
    }
  }

  /** Word pieces as strings (for inspection and tests); no [CLS]/[SEP], no truncation. */
  tokenize(text: string): string[] {
    const byId = new Map<number, string>();
    for (const [token, id] of this.options.vocab) if (!byId.has(id)) byId.set(id, token);
    return this.basicTokens(text).flatMap((w) => this.wordIds(w).map((id) => byId.get(id) as string));
  }

  /** [CLS] pieces… [SEP] as ids, the pieces cut so the whole fits maxLength. */
  encode(text: string): number[] {
    const room = Math.max(0, this.options.maxLength - 2);
    const ids: number[] = [this.ids.cls];
    for (const word of this.words(text)) {
      for (const id of this.wordIds(word)) {
        if (ids.length > room) break;
        ids.push(id);
      }
      if (ids.length > room) break;
    }
    ids.push(this.ids.sep);
    return ids;
  }

  private wordIds(word: string): readonly number[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const ids = this.pieces(word);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(word, ids);
    return ids;
  }

  /** Greedy longest-match-first; a word with any unmatched stretch is one unknown token. */
  private pieces(word: string): number[] {
    const chars = [...word];
    const { vocab, continuation, maxWordChars } = this.options;
    if (chars.length > maxWordChars) return [this.ids.unknown];
    const ids: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = Math.min(chars.length, start + this.longestPiece);
      let found: number | undefined;
      while (start < end) {
        const piece = chars.slice(start, end).join("");
        found = vocab.get(start > 0 ? continuation + piece : piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) return [this.ids.unknown];
      ids.push(found);
      start = end;
    }
    return ids;
  }
}
