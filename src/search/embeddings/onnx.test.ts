import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure } from "../../../test/helpers/failure.js";
import {
  TINY_DIMENSIONS,
  TINY_VOCAB,
  type TinyModelOptions,
  tinyEmbeddingTable,
  writeTinyModel,
} from "../../../test/helpers/tiny-embedding-model.js";
import { tempDir } from "../../../test/helpers/tmp.js";
import { type OnnxEmbeddingProvider, openOnnxProvider } from "./onnx.js";
import { dot, normalize } from "./provider.js";

let root: string;
let cleanup: () => Promise<void>;
const opened: OnnxEmbeddingProvider[] = [];

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("afs-embed-"));
});
afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await cleanup();
});

let count = 0;
/** A fresh tiny model directory named `name` (the provider id's name part) and its provider. */
async function model(options: TinyModelOptions = {}, name = "tiny"): Promise<OnnxEmbeddingProvider> {
  const dir = join(root, String(count++), name);
  await writeTinyModel(dir, options);
  const provider = await openOnnxProvider({ dir });
  opened.push(provider);
  return provider;
}

/** Mean of the table rows for `tokens`, normalized: what BERT-style mean pooling must produce. */
function byHand(tokens: string[]): number[] {
  const table = tinyEmbeddingTable();
  const sum = new Float32Array(TINY_DIMENSIONS);
  for (const t of tokens) {
    const id = TINY_VOCAB.indexOf(t);
    expect(id, t).toBeGreaterThanOrEqual(0);
    for (let d = 0; d < TINY_DIMENSIONS; d++) sum[d] = (sum[d] as number) + (table[id * TINY_DIMENSIONS + d] as number);
  }
  return Array.from(normalize(sum.map((x) => x / tokens.length)));
}

const close = (a: Float32Array | undefined, b: ArrayLike<number>): void => {
  expect(a).toBeDefined();
  expect(a).toHaveLength(b.length);
  (a as Float32Array).forEach((x, i) => {
    expect(x).toBeCloseTo(b[i] as number, 5);
  });
};

describe("the local ONNX provider on a tiny model built by the test", () => {
  it("loads the directory, names the model by directory and content hash, and learns its width", async () => {
    const p = await model();
    expect(p.id).toMatch(/^onnx:tiny@[0-9a-f]{12}$/);
    expect(p.dimensions).toBeUndefined();
    const [v] = await p.embed(["cat"], "query");
    expect(p.dimensions).toBe(TINY_DIMENSIONS);
    expect(v).toBeInstanceOf(Float32Array);
  });

  it("mean-pools token states over [CLS] … [SEP] and returns unit vectors", async () => {
    const p = await model();
    const vectors = await p.embed(["Cat kitten", "the invoice", "RAIN, snow!"], "document");
    close(vectors[0], byHand(["[CLS]", "cat", "kitten", "[SEP]"]));
    close(vectors[1], byHand(["[CLS]", "the", "invoice", "[SEP]"]));
    // "!" is not in the vocabulary: it is split off as punctuation and becomes [UNK].
    close(vectors[2], byHand(["[CLS]", "rain", ",", "snow", "[UNK]", "[SEP]"]));
    for (const v of vectors) expect(dot(v, v)).toBeCloseTo(1, 5);
  });

  it("puts texts of one topic nearest each other", async () => {
    const p = await model();
    const docs = ["invoice payment", "dog puppy", "compile function bug", "rain storm wind"];
    const [query, ...vectors] = await p.embed(["cat kitten", ...docs], "document");
    const scores = vectors.map((v) => dot(query as Float32Array, v));
    const best = scores.indexOf(Math.max(...scores));
    expect(docs[best]).toBe("dog puppy");
    expect(scores[1]).toBeGreaterThan((scores[0] as number) + 0.5);

    const [q] = await p.embed(["the bank sent a receipt"], "query");
    const ranked = docs
      .map((d, i) => ({ d, s: dot(q as Float32Array, vectors[i] as Float32Array) }))
      .sort((a, b) => b.s - a.s);
    expect(ranked[0]?.d).toBe("invoice payment");
  });

  it("splits unknown words into word pieces, or [UNK] when no pieces fit", async () => {
    const p = await model();
    expect(p.tokenizer.tokenize("Kittens raining dogs")).toEqual(["kitten", "##s", "rain", "##ing", "dog", "##s"]);
    expect(p.tokenizer.tokenize("zebra café")).toEqual(["[UNK]", "cafe"]);
    const [v] = await p.embed(["kittens"], "document");
    close(v, byHand(["[CLS]", "kitten", "##s", "[SEP]"]));
  });

  it("gives the same vectors in a padded batch as one at a time (padding is masked out)", async () => {
    const p = await model();
    const texts = ["cat", "dog puppy pet fur and the kitten", "tax", "", "storm of the snow and rain, wind cloud sun"];
    const together = await p.embed(texts, "document");
    for (const [i, text] of texts.entries()) {
      const [alone] = await p.embed([text], "document");
      close(together[i], alone as Float32Array);
    }
  });

  it("batches larger inputs than one run takes, keeping order", async () => {
    const p = await model();
    const words = Object.freeze(["cat", "invoice", "compile", "rain"]);
    const texts = Array.from({ length: 75 }, (_, i) => `${words[i % 4]} ${"the ".repeat(i % 7)}`);
    const vectors = await p.embed(texts, "document");
    const singles = await Promise.all(words.map(async (w) => (await p.embed([w], "document"))[0] as Float32Array));
    vectors.forEach((v, i) => {
      const nearest = singles.map((s) => dot(v, s));
      expect(nearest.indexOf(Math.max(...nearest))).toBe(i % 4);
    });
  });

  it("uses a pooled sentence_embedding output as is, matching the per-token model", async () => {
    const perToken = await model();
    const pooled = await model({ output: "sentence_embedding" });
    expect(pooled.id).not.toBe(perToken.id);
    const texts = ["cat kitten", "invoice and tax", "rain"];
    const a = await perToken.embed(texts, "document");
    const b = await pooled.embed(texts, "document");
    texts.forEach((_, i) => {
      close(b[i], a[i] as Float32Array);
    });
  });

  it("feeds only the inputs the model declares", async () => {
    const full = await model();
    const idsOnly = await model({ inputs: ["input_ids"] });
    const noTypes = await model({ inputs: ["input_ids", "attention_mask"] });
    const [a] = await full.embed(["dog fur"], "document");
    close((await idsOnly.embed(["dog fur"], "document"))[0], a as Float32Array);
    close((await noTypes.embed(["dog fur"], "document"))[0], a as Float32Array);
  });

  it("finds onnx/model.onnx and reads a vocabulary from tokenizer.json when there is no vocab.txt", async () => {
    const dir = join(root, "fast-layout");
    await writeTinyModel(dir, { modelPath: "onnx/model.onnx", tokenizerConfig: null });
    const vocab = Object.fromEntries(TINY_VOCAB.map((t, i) => [t, i]));
    await writeFile(
      join(dir, "tokenizer.json"),
      JSON.stringify({
        normalizer: { type: "BertNormalizer", lowercase: true, strip_accents: null, handle_chinese_chars: true },
        model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", vocab },
      }),
    );
    await rm(join(dir, "vocab.txt"));
    const p = await openOnnxProvider({ dir });
    opened.push(p);
    expect(p.tokenizer.tokenize("Kittens")).toEqual(["kitten", "##s"]);
    close((await p.embed(["Kittens"], "document"))[0], byHand(["[CLS]", "kitten", "##s", "[SEP]"]));
  });

  it("truncates to the configured length, keeping [SEP]", async () => {
    const p = await model({ tokenizerConfig: { model_max_length: 4 } });
    const [cut] = await p.embed(["cat dog rain snow"], "document");
    close(cut, byHand(["[CLS]", "cat", "dog", "[SEP]"]));

    // sentence-transformers' max_seq_length wins over the tokenizer's.
    const dir = join(root, "st-config");
    await writeTinyModel(dir, { tokenizerConfig: { model_max_length: 512 } });
    await writeFile(join(dir, "sentence_bert_config.json"), JSON.stringify({ max_seq_length: 3 }));
    const st = await openOnnxProvider({ dir });
    opened.push(st);
    expect(st.tokenizer.encode("cat dog rain")).toHaveLength(3);
  });

  it("changes id exactly when the model does", async () => {
    const a = await model({}, "same");
    const b = await model({}, "same");
    const c = await model({ seed: 2 }, "same");
    expect(b.id).toBe(a.id);
    expect(c.id).not.toBe(a.id);
  });

  it("embeds text the vocabulary does not cover (CJK, emoji, controls) as finite unit vectors", async () => {
    const p = await model();
    const vectors = await p.embed(["中文 文本", "😀\u0000\u200b", "   "], "document");
    for (const v of vectors) {
      expect(v.every(Number.isFinite)).toBe(true);
      expect(dot(v, v)).toBeCloseTo(1, 5);
    }
    expect(p.tokenizer.tokenize("中文")).toEqual(["[UNK]", "[UNK]"]);
  });

  it("releases its session on close and opens it again when needed", async () => {
    const p = await model();
    const [before] = await p.embed(["cloud"], "document");
    await p.close();
    await p.close();
    close((await p.embed(["cloud"], "document"))[0], before as Float32Array);
    expect(await p.embed([], "document")).toEqual([]);
  });

  it("honours an aborted signal", async () => {
    const p = await model();
    await expect(p.embed(["cat"], "document", { signal: AbortSignal.abort(new Error("stop")) })).rejects.toThrow(
      "stop",
    );
  });
});

describe("local model errors say what to fix", () => {
  it("a missing directory", async () => {
    const e = await failure(openOnnxProvider({ dir: join(root, "nowhere") }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/nowhere does not exist.*AFS_EMBED_MODEL_DIR/);
  });

  it("a directory without a model file, naming the .onnx files it does hold", async () => {
    const dir = join(root, "no-model");
    await writeTinyModel(dir);
    await rm(join(dir, "model.onnx"));
    const none = await failure(openOnnxProvider({ dir }));
    expect(none.code).toBe("INVALID_ARGUMENT");
    expect(none.message).toMatch(/has no model\.onnx or onnx\/model\.onnx; export the model to ONNX/);

    await writeTinyModel(dir, { modelPath: "onnx/model_quantized.onnx" });
    await rm(join(dir, "model.onnx"), { force: true });
    const other = await failure(openOnnxProvider({ dir }));
    expect(other.message).toMatch(/holds onnx\/model_quantized\.onnx: set AFS_EMBED_MODEL_FILE/);
    const chosen = await openOnnxProvider({ dir, modelFile: "onnx/model_quantized.onnx" });
    opened.push(chosen);
    expect((await chosen.embed(["sun"], "query"))[0]).toHaveLength(TINY_DIMENSIONS);
  });

  it("a directory without a vocabulary", async () => {
    const dir = join(root, "no-vocab");
    await writeTinyModel(dir);
    await rm(join(dir, "vocab.txt"));
    expect((await failure(openOnnxProvider({ dir }))).message).toMatch(/has no vocab\.txt/);
  });

  it("a vocabulary without BERT's special tokens", async () => {
    const dir = join(root, "odd-vocab");
    await writeTinyModel(dir);
    await writeFile(join(dir, "vocab.txt"), "hello\nworld\n");
    expect((await failure(openOnnxProvider({ dir }))).message).toMatch(/vocabulary without the \[UNK\] token/);
  });

  it("a damaged model file, on first use", async () => {
    const dir = join(root, "damaged");
    await writeTinyModel(dir);
    await writeFile(join(dir, "model.onnx"), "not a model");
    const p = await openOnnxProvider({ dir });
    const e = await failure(p.embed(["cat"], "document"));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/onnxruntime could not load the embedding model .*model\.onnx.*complete ONNX file/);
    // A failed load is not kept: the next call tries again (and says the same).
    expect((await failure(p.embed(["cat"], "document"))).message).toMatch(/could not load/);
    await p.close();
  });

  it("onnxruntime-node missing", async () => {
    const dir = join(root, "no-runtime");
    await writeTinyModel(dir);
    const missing = Object.assign(new Error("Cannot find package 'onnxruntime-node'"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    const e = await failure(openOnnxProvider({ dir, importRuntime: () => Promise.reject(missing) }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/optional dependency onnxruntime-node is not installed.*npm install onnxruntime-node/);
  });

  it("a malformed tokenizer_config.json", async () => {
    const dir = join(root, "bad-config");
    await writeTinyModel(dir);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "tokenizer_config.json"), "{nope");
    expect((await failure(openOnnxProvider({ dir }))).message).toMatch(
      /tokenizer_config\.json that is not a JSON object/,
    );
    await rename(join(dir, "tokenizer_config.json"), join(dir, "ignored.json"));
    const p = await openOnnxProvider({ dir });
    opened.push(p);
  });
});
