// Reads a local embedding model directory in the layout sentence-transformers models have when
// exported to ONNX (e.g. Xenova/all-MiniLM-L6-v2): the model file, the WordPiece vocabulary and the
// tokenizer settings, plus a content hash that names the model in the provider id.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, readdir, readFile, stat } from "node:fs/promises";
import { basename, join, relative, resolve } from "node:path";
import { AfsError } from "../../core/errors.js";
import { BERT_DEFAULTS, parseVocab, type WordPieceOptions } from "./wordpiece.js";

/** Where the model file may be, in order; `modelFile` (AFS_EMBED_MODEL_FILE) overrides. */
export const MODEL_FILE_CANDIDATES = ["model.onnx", "onnx/model.onnx"] as const;

export interface ModelDir {
  dir: string;
  modelFile: string;
  tokenizer: WordPieceOptions;
  /** First 12 hex digits of SHA-256 over the model, vocabulary and tokenizer settings. */
  hash: string;
  /** Sizes and modification times of the files read, to notice a changed model cheaply. */
  fingerprint: string;
}

/** A readable error naming the directory and what to do about it. */
const misconfigured = (dir: string, what: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `the local embedding model directory ${dir} ${what}`, { dir });

export async function readModelDir(dirArg: string, modelFileArg?: string): Promise<ModelDir> {
  const dir = resolve(dirArg);
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw misconfigured(
      dir,
      "does not exist or is not a directory; set AFS_EMBED_MODEL_DIR to a sentence-transformers model exported to ONNX (model.onnx + vocab.txt)",
    );
  }
  const modelFile = await findModelFile(dir, modelFileArg);
  const fingerprint = await fingerprintModel(dir, modelFile);
  const files = await readTokenizerFiles(dir);
  const tokenizer = tokenizerOptions(dir, files);
  const hash = createHash("sha256");
  await hashFile(hash, modelFile);
  hash.update(JSON.stringify({ ...tokenizer, vocab: undefined }));
  hash.update(files.vocabText ?? files.tokenizerJson ?? "");
  return { dir, modelFile, tokenizer, hash: hash.digest("hex").slice(0, 12), fingerprint };
}

const SIDE_FILES = ["vocab.txt", "tokenizer.json", "tokenizer_config.json", "sentence_bert_config.json", "config.json"];

/**
 * Changes whenever the model file or a tokenizer file is replaced or edited: sizes, times and inodes,
 * plus the model file's first and last 64 KiB (file times can be coarser than a quick rewrite).
 */
export async function fingerprintModel(dir: string, modelFile: string): Promise<string> {
  const files = [modelFile, ...SIDE_FILES.map((f) => join(dir, f))];
  const stats = await Promise.all(files.map((f) => stat(f).catch(() => undefined)));
  const sample = createHash("sha256");
  const size = stats[0]?.size ?? 0;
  const handle = await open(modelFile, "r").catch(() => undefined);
  if (handle) {
    try {
      const span = Math.min(size, SAMPLE_BYTES);
      const buffer = Buffer.alloc(span);
      for (const at of new Set([0, Math.max(0, size - span)])) {
        const { bytesRead } = await handle.read(buffer, 0, span, at);
        sample.update(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  }
  const times = stats.map((s) => (s ? `${s.size}:${s.mtimeMs}:${s.ino}` : "-")).join("|");
  return `${times}|${sample.digest("hex").slice(0, 16)}`;
}

const SAMPLE_BYTES = 64 * 1024;

async function findModelFile(dir: string, given?: string): Promise<string> {
  const candidates = given ? [given] : MODEL_FILE_CANDIDATES;
  for (const candidate of candidates) {
    const file = resolve(dir, candidate);
    if ((await stat(file).catch(() => undefined))?.isFile()) return file;
  }
  const found = await onnxFilesUnder(dir);
  const hint =
    found.length > 0
      ? `; it holds ${found.join(", ")}: set AFS_EMBED_MODEL_FILE to the one to use`
      : "; export the model to ONNX (e.g. optimum-cli export onnx) or download an ONNX build such as Xenova/all-MiniLM-L6-v2";
  throw misconfigured(dir, `has no ${candidates.join(" or ")}${hint}`);
}

async function onnxFilesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries
    .filter((e) => e.endsWith(".onnx"))
    .map((e) => relative(dir, join(dir, e)))
    .sort()
    .slice(0, 8);
}

interface TokenizerFiles {
  vocabText?: string;
  tokenizerJson?: string;
  tokenizerConfig: Record<string, unknown>;
  sentenceBertConfig: Record<string, unknown>;
  modelConfig: Record<string, unknown>;
}

async function readTokenizerFiles(dir: string): Promise<TokenizerFiles> {
  const text = (name: string): Promise<string | undefined> => readFile(join(dir, name), "utf8").catch(() => undefined);
  const json = async (name: string): Promise<Record<string, unknown>> => {
    const raw = await text(name);
    if (raw === undefined) return {};
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // reported below
    }
    throw misconfigured(dir, `has a ${name} that is not a JSON object; fix or remove it`);
  };
  const [vocabText, tokenizerJson] = await Promise.all([text("vocab.txt"), text("tokenizer.json")]);
  return {
    vocabText,
    tokenizerJson: vocabText === undefined ? tokenizerJson : undefined,
    tokenizerConfig: await json("tokenizer_config.json"),
    sentenceBertConfig: await json("sentence_bert_config.json"),
    modelConfig: await json("config.json"),
  };
}

/** Settings from tokenizer_config.json (and tokenizer.json's normalizer), BERT's defaults otherwise. */
function tokenizerOptions(dir: string, files: TokenizerFiles): WordPieceOptions {
  const config = files.tokenizerConfig;
  const fast = files.tokenizerJson === undefined ? undefined : parseTokenizerJson(dir, files.tokenizerJson);
  const vocab = fast?.vocab ?? (files.vocabText === undefined ? undefined : parseVocab(files.vocabText));
  if (!vocab || vocab.size === 0) {
    throw misconfigured(
      dir,
      "has no vocab.txt (nor a WordPiece tokenizer.json); only BERT WordPiece models are supported",
    );
  }
  const lowerCase = bool(config.do_lower_case) ?? fast?.lowerCase ?? BERT_DEFAULTS.lowerCase;
  const options: WordPieceOptions = {
    ...BERT_DEFAULTS,
    vocab,
    lowerCase,
    // BERT: strip_accents unset means "as lowercasing does".
    stripAccents: bool(config.strip_accents) ?? fast?.stripAccents ?? lowerCase,
    splitChinese: bool(config.tokenize_chinese_chars) ?? fast?.splitChinese ?? BERT_DEFAULTS.splitChinese,
    maxLength: maxLength(files),
    unknown: token(config.unk_token) ?? fast?.unknown ?? BERT_DEFAULTS.unknown,
    cls: token(config.cls_token) ?? BERT_DEFAULTS.cls,
    sep: token(config.sep_token) ?? BERT_DEFAULTS.sep,
    pad: token(config.pad_token) ?? BERT_DEFAULTS.pad,
    continuation: fast?.continuation ?? BERT_DEFAULTS.continuation,
  };
  for (const special of [options.unknown, options.cls, options.sep, options.pad]) {
    if (!vocab.has(special)) throw misconfigured(dir, `has a vocabulary without the ${special} token`);
  }
  return options;
}

/**
 * sentence-transformers' max_seq_length (what the model was trained to pool over) when given, else the
 * tokenizer's model_max_length, never beyond the model's position embeddings (512 when nothing says).
 */
function maxLength(files: TokenizerFiles): number {
  const positions = num(files.modelConfig.max_position_embeddings) ?? 512;
  const wanted = num(files.sentenceBertConfig.max_seq_length) ?? num(files.tokenizerConfig.model_max_length);
  // Tokenizers without a limit store a huge sentinel (int(1e30)); the position table is the real cap.
  return Math.max(3, Math.floor(Math.min(wanted ?? positions, positions)));
}

interface FastTokenizer {
  vocab: Map<string, number>;
  lowerCase?: boolean;
  stripAccents?: boolean;
  splitChinese?: boolean;
  unknown?: string;
  continuation?: string;
}

/** The WordPiece parts of a Hugging Face tokenizer.json, for directories that ship no vocab.txt. */
function parseTokenizerJson(dir: string, raw: string): FastTokenizer {
  let parsed: { model?: Record<string, unknown>; normalizer?: Record<string, unknown> | null };
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw misconfigured(dir, "has a tokenizer.json that is not JSON; fix it or add vocab.txt");
  }
  const model = parsed.model ?? {};
  if (model.type !== "WordPiece" || !model.vocab || typeof model.vocab !== "object") {
    throw misconfigured(
      dir,
      `has a ${String(model.type ?? "unknown")} tokenizer.json and no vocab.txt; only BERT WordPiece models are supported`,
    );
  }
  const vocab = new Map<string, number>();
  for (const [t, id] of Object.entries(model.vocab as Record<string, unknown>))
    if (typeof id === "number") vocab.set(t, id);
  const normalizer = parsed.normalizer?.type === "BertNormalizer" ? parsed.normalizer : {};
  return {
    vocab,
    lowerCase: bool(normalizer.lowercase),
    stripAccents: bool(normalizer.strip_accents),
    splitChinese: bool(normalizer.handle_chinese_chars),
    unknown: token(model.unk_token),
    continuation: typeof model.continuing_subword_prefix === "string" ? model.continuing_subword_prefix : undefined,
  };
}

const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 1 ? v : undefined);
/** Special tokens are strings or AddedToken objects ({content}). */
const token = (v: unknown): string | undefined =>
  typeof v === "string"
    ? v
    : v && typeof v === "object" && typeof (v as { content?: unknown }).content === "string"
      ? (v as { content: string }).content
      : undefined;

async function hashFile(hash: ReturnType<typeof createHash>, file: string): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

/** The directory's name, for the provider id ("onnx:<name>@<hash>"). */
export const modelName = (m: ModelDir): string => basename(m.dir);
