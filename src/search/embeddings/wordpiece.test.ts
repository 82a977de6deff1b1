import { describe, expect, it } from "vitest";
import { BERT_DEFAULTS, parseVocab, type WordPieceOptions, WordPieceTokenizer } from "./wordpiece.js";

// The vocabulary of Hugging Face's own BertTokenizer tests, so the expected pieces are theirs.
const VOCAB = [
  "[PAD]",
  "[UNK]",
  "[CLS]",
  "[SEP]",
  "want",
  "##want",
  "##ed",
  "wa",
  "un",
  "runn",
  "##ing",
  ",",
  "low",
  "lowest",
  "hello",
  "world",
  "!",
  "'",
  "t",
  "don",
  "_",
  "$",
  "a",
];

const tokenizer = (options: Partial<WordPieceOptions> = {}): WordPieceTokenizer =>
  new WordPieceTokenizer({ ...BERT_DEFAULTS, vocab: parseVocab(`${VOCAB.join("\n")}\n`), ...options });

describe("WordPieceTokenizer", () => {
  it("splits words greedily, longest piece first (BERT's own example)", () => {
    expect(tokenizer().tokenize("UNwant\u00E9d,running")).toEqual(["un", "##want", "##ed", ",", "runn", "##ing"]);
    expect(tokenizer().tokenize("unwantedX running")).toEqual(["[UNK]", "runn", "##ing"]);
    expect(tokenizer().tokenize("lowest")).toEqual(["lowest"]);
  });

  it("lowercases and strips accents, or keeps both when the model is cased", () => {
    const t = tokenizer();
    expect(t.basicTokens(" \tHeLLo!how  \n Are yoU?  ")).toEqual(["hello", "!", "how", "are", "you", "?"]);
    expect(t.basicTokens("HäLLo Ünïcödé")).toEqual(["hallo", "unicode"]);
    const cased = tokenizer({ lowerCase: false, stripAccents: false });
    expect(cased.basicTokens("HäLLo!how")).toEqual(["HäLLo", "!", "how"]);
    expect(tokenizer({ lowerCase: true, stripAccents: false }).basicTokens("HäLLo")).toEqual(["hällo"]);
  });

  it("splits on punctuation, ASCII symbols included", () => {
    expect(tokenizer().basicTokens("don't foo_bar $5 a-b ¿qué?")).toEqual([
      "don",
      "'",
      "t",
      "foo",
      "_",
      "bar",
      "$",
      "5",
      "a",
      "-",
      "b",
      "¿",
      "que",
      "?",
    ]);
  });

  it("drops control characters, turns other whitespace into spaces and isolates CJK ideographs", () => {
    expect(tokenizer().basicTokens("a\u0000b\u0007c\uFFFD d\u00A0e\u3000f")).toEqual(["abc", "d", "e", "f"]);
    expect(tokenizer().basicTokens("ah博推zz")).toEqual(["ah", "博", "推", "zz"]);
    expect(tokenizer({ splitChinese: false }).basicTokens("ah博推zz")).toEqual(["ah博推zz"]);
  });

  it("makes a word longer than maxWordChars one [UNK]", () => {
    expect(tokenizer().tokenize(`${"want".repeat(30)} world`)).toEqual(["[UNK]", "world"]);
    expect(tokenizer({ maxWordChars: 4 }).tokenize("wantwant")).toEqual(["[UNK]"]);
  });

  it("encodes as [CLS] ids [SEP], truncated to maxLength", () => {
    const t = tokenizer({ maxLength: 5 });
    const id = (token: string): number => VOCAB.indexOf(token);
    expect(t.encode("hello world")).toEqual([id("[CLS]"), id("hello"), id("world"), id("[SEP]")]);
    expect(t.encode("hello world hello world")).toEqual([
      id("[CLS]"),
      id("hello"),
      id("world"),
      id("hello"),
      id("[SEP]"),
    ]);
    expect(t.encode("unwanted running")).toHaveLength(5);
    expect(t.encode("")).toEqual([id("[CLS]"), id("[SEP]")]);
    expect(t.padId).toBe(0);
  });

  it("needs the special tokens in the vocabulary", () => {
    expect(() => new WordPieceTokenizer({ ...BERT_DEFAULTS, vocab: parseVocab("a\nb\n") })).toThrow(
      "the vocabulary has no [UNK] token",
    );
  });

  it("reads vocab.txt with CRLF line ends, ids by line, first occurrence winning", () => {
    const vocab = parseVocab("[PAD]\r\nx\r\ny\r\nx\r\n");
    expect([...vocab]).toEqual([
      ["[PAD]", 0],
      ["x", 1],
      ["y", 2],
    ]);
  });
});
