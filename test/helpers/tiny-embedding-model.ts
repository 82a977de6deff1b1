// Builds a tiny sentence-embedding model directory at test time (model.onnx + vocab.txt +
// tokenizer_config.json), laid out like a sentence-transformers model exported to ONNX, so the local
// embedding provider, file_query and the retrieval bench run a real model with no download.
// Words of one topic share a direction, so nearness of meaning is testable.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { mulberry32 } from "../../bench/corpus.js";
import { DataType, encodeModel, type Graph, type Node, type ValueInfo } from "./onnx-writer.js";

/** Words by topic; a word's vector points mostly along its topic's axis. */
export const TINY_TOPICS = {
  animals: ["cat", "kitten", "dog", "puppy", "pet", "fur"],
  finance: ["invoice", "payment", "bank", "money", "tax", "receipt"],
  code: ["function", "compile", "variable", "bug", "server", "deploy"],
  weather: ["rain", "snow", "sun", "cloud", "storm", "wind"],
} as const;

export type TinyTopic = keyof typeof TINY_TOPICS;

const SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const COMMON = ["the", "a", "and", "of", "is", "kit", "cafe", ".", ",", "##s", "##es", "##ing"];

/** The vocabulary in id order, as vocab.txt holds it. */
export const TINY_VOCAB: readonly string[] = [...SPECIAL, ...COMMON, ...Object.values(TINY_TOPICS).flat()];

/** Vector width: one axis per topic, three for per-word variation, one for function words. */
export const TINY_DIMENSIONS = 8;

export type TinyInput = "input_ids" | "attention_mask" | "token_type_ids";

export interface TinyModelOptions {
  /** Graph inputs the model declares; default all three BERT inputs. */
  inputs?: TinyInput[];
  /**
   * `last_hidden_state` (default): per-token vectors [batch, seq, dim], pooled by the provider; padding
   * positions carry a large [PAD] vector, so a provider that ignores the attention mask is caught.
   * `sentence_embedding`: the graph pools itself (masked sum) into [batch, dim].
   */
  output?: "last_hidden_state" | "sentence_embedding";
  /** Where the model file goes inside the directory; default `model.onnx`. */
  modelPath?: string;
  /** Contents of tokenizer_config.json; null writes none. Default `{do_lower_case: true, model_max_length: 128}`. */
  tokenizerConfig?: Record<string, unknown> | null;
  /** Varies the per-word components: a different seed is a different model (and provider id). */
  seed?: number;
}

export interface TinyModel {
  dir: string;
  modelFile: string;
  vocab: readonly string[];
  dimensions: number;
}

/** Writes the model directory and returns where things are. */
export async function writeTinyModel(dir: string, options: TinyModelOptions = {}): Promise<TinyModel> {
  const modelFile = join(dir, options.modelPath ?? "model.onnx");
  await mkdir(dirname(modelFile), { recursive: true });
  await writeFile(modelFile, tinyModelBytes(options));
  await writeFile(join(dir, "vocab.txt"), `${TINY_VOCAB.join("\n")}\n`);
  const config = options.tokenizerConfig === undefined ? defaultTokenizerConfig : options.tokenizerConfig;
  if (config !== null) await writeFile(join(dir, "tokenizer_config.json"), JSON.stringify(config, null, 2));
  return { dir, modelFile, vocab: TINY_VOCAB, dimensions: TINY_DIMENSIONS };
}

const defaultTokenizerConfig = { do_lower_case: true, model_max_length: 128, tokenizer_class: "BertTokenizer" };

/** The embedding table [vocab, dim]: exported so tests can compute the expected vector by hand. */
export function tinyEmbeddingTable(seed = 1): Float32Array {
  const table = new Float32Array(TINY_VOCAB.length * TINY_DIMENSIONS);
  const random = mulberry32(seed);
  const topicAxis = new Map<string, number>();
  Object.values(TINY_TOPICS).forEach((words, axis) => {
    for (const w of words) topicAxis.set(w, axis);
  });
  TINY_VOCAB.forEach((token, id) => {
    const row = table.subarray(id * TINY_DIMENSIONS, (id + 1) * TINY_DIMENSIONS);
    const axis = topicAxis.get(token);
    if (token === "[PAD]") row.fill(5);
    else if (axis !== undefined) {
      row[axis] = 1;
      for (let d = 4; d < 7; d++) row[d] = (random() - 0.5) * 0.6;
    } else {
      // Function words, subword pieces and specials: small, along the shared last axis.
      row[7] = 0.2 + random() * 0.2;
      row[4] = (random() - 0.5) * 0.1;
    }
  });
  return table;
}

/** The ONNX bytes alone. */
export function tinyModelBytes(options: TinyModelOptions = {}): Uint8Array {
  const inputs = options.inputs ?? ["input_ids", "attention_mask", "token_type_ids"];
  const output = options.output ?? "last_hidden_state";
  const D = TINY_DIMENSIONS;
  const tokens = (name: string): ValueInfo => ({ name, type: DataType.INT64, shape: ["batch", "sequence"] });
  const graph: Graph = {
    name: "tiny-embedding",
    nodes: [{ op: "Gather", inputs: ["embeddings", "input_ids"], outputs: ["word_vectors"] }],
    initializers: [{ name: "embeddings", dims: [TINY_VOCAB.length, D], data: tinyEmbeddingTable(options.seed) }],
    inputs: inputs.map(tokens),
    outputs: [],
  };
  let hidden = "word_vectors";
  const add = (node: Node): void => {
    graph.nodes.push(node);
    hidden = node.outputs[0] as string;
  };
  if (inputs.includes("token_type_ids")) {
    // Row 0 is zero and row 1 is not: a provider feeding anything but zeros changes the vectors.
    const types = new Float32Array(2 * D);
    types.fill(3, D);
    graph.initializers.push({ name: "type_embeddings", dims: [2, D], data: types });
    graph.nodes.push({ op: "Gather", inputs: ["type_embeddings", "token_type_ids"], outputs: ["type_vectors"] });
    add({ op: "Add", inputs: [hidden, "type_vectors"], outputs: ["with_types"] });
  }
  if (inputs.includes("attention_mask")) {
    graph.initializers.push({ name: "last_axis", dims: [1], data: BigInt64Array.from([-1n]) });
    graph.nodes.push(
      { op: "Cast", inputs: ["attention_mask"], outputs: ["mask_float"], attributes: [{ name: "to", int: 1 }] },
      { op: "Unsqueeze", inputs: ["mask_float", "last_axis"], outputs: ["mask_column"] },
    );
    if (output === "sentence_embedding") {
      add({ op: "Mul", inputs: [hidden, "mask_column"], outputs: ["masked"] });
    } else {
      // Per-token output keeps the [PAD] vectors at padded positions (real models leave non-zero
      // states there too), so pooling must honour the mask; the mask only joins as "+ 0 × mask".
      graph.initializers.push({ name: "zero", dims: [], data: new Float32Array([0]) });
      graph.nodes.push({ op: "Mul", inputs: ["mask_column", "zero"], outputs: ["mask_zero"] });
      add({ op: "Add", inputs: [hidden, "mask_zero"], outputs: ["with_mask"] });
    }
  }
  if (output === "sentence_embedding") {
    graph.initializers.push({ name: "sequence_axis", dims: [1], data: BigInt64Array.from([1n]) });
    add({
      op: "ReduceSum",
      inputs: [hidden, "sequence_axis"],
      outputs: ["pooled"],
      attributes: [{ name: "keepdims", int: 0 }],
    });
  }
  graph.nodes.push({ op: "Identity", inputs: [hidden], outputs: [output] });
  const shape = output === "sentence_embedding" ? ["batch", D] : ["batch", "sequence", D];
  graph.outputs.push({ name: output, type: DataType.FLOAT, shape });
  return encodeModel(graph);
}
