// The local embedding provider: a sentence-transformers model exported to ONNX, run in-process by
// onnxruntime-node (an optional dependency, loaded only when this provider is used). Never downloads.
import { AfsError } from "../../core/errors.js";
import { type ModelDir, modelName, readModelDir } from "./model-dir.js";
import { batches, type EmbeddingProvider, type EmbedKind, type EmbedOptions, normalize } from "./provider.js";
import { WordPieceTokenizer } from "./wordpiece.js";

/** The slice of onnxruntime-node this provider uses, so it builds without the package installed. */
export interface OrtTensor {
  readonly dims: readonly number[];
  readonly type: string;
  readonly data: unknown;
}

export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

export interface OrtRuntime {
  InferenceSession: { create(path: string, options?: Record<string, unknown>): Promise<OrtSession> };
  Tensor: new (type: "int64", data: BigInt64Array, dims: readonly number[]) => OrtTensor;
}

const RUNTIME_PACKAGE = "onnxruntime-node";

/** Imports onnxruntime-node (or what `importer` gives), or says how to get it or do without it. */
export async function loadOnnxRuntime(
  importer: () => Promise<unknown> = () => import(RUNTIME_PACKAGE),
): Promise<OrtRuntime> {
  try {
    const mod = (await importer()) as OrtRuntime & { default?: OrtRuntime };
    return mod.default ?? mod;
  } catch (e) {
    throw runtimeMissing(e);
  }
}

function runtimeMissing(e: unknown): AfsError {
  const cause = e instanceof Error ? e.message.split("\n")[0] : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  const why =
    code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND"
      ? "the optional dependency onnxruntime-node is not installed"
      : `onnxruntime-node failed to load (${cause})`;
  return new AfsError(
    "INVALID_ARGUMENT",
    `the local embedding provider (AFS_EMBED_MODEL_DIR) cannot run: ${why}; install it with \`npm install onnxruntime-node\` (its CPU binaries ship in the package), or use AFS_EMBED_PROVIDER=openai or none`,
    { cause },
  );
}

export interface OnnxProviderOptions {
  /** The model directory (AFS_EMBED_MODEL_DIR). */
  dir: string;
  /** The model file inside it when not model.onnx or onnx/model.onnx (AFS_EMBED_MODEL_FILE). */
  modelFile?: string;
  /** Texts per inference run; default 32. */
  batchSize?: number;
  /** Threads one inference run may use; onnxruntime's default (all cores) when unset. */
  threads?: number;
  /** Replaces `import("onnxruntime-node")` (tests use it to simulate a missing package). */
  importRuntime?: () => Promise<unknown>;
}

/** Opens the directory and checks the runtime loads; the model itself loads on the first embed. */
export async function openOnnxProvider(options: OnnxProviderOptions): Promise<OnnxEmbeddingProvider> {
  const model = await readModelDir(options.dir, options.modelFile);
  const runtime = await loadOnnxRuntime(options.importRuntime);
  return new OnnxEmbeddingProvider(model, runtime, options);
}

/** Preferred outputs, in order: already pooled, then per-token states; else the first output. */
const OUTPUTS = ["sentence_embedding", "last_hidden_state", "token_embeddings"];
/** Inputs this provider knows how to fill. */
const KNOWN_INPUTS = new Set(["input_ids", "attention_mask", "token_type_ids"]);
/** Padded tokens one run may hold (batch × longest), so a batch of long texts stays small. */
const MAX_BATCH_TOKENS = 16_384;

export class OnnxEmbeddingProvider implements EmbeddingProvider {
  readonly id: string;
  readonly batchSize: number;
  readonly tokenizer: WordPieceTokenizer;
  private dims: number | undefined;
  private session: Promise<OrtSession> | undefined;

  constructor(
    readonly model: ModelDir,
    private readonly runtime: OrtRuntime,
    private readonly options: OnnxProviderOptions,
  ) {
    this.id = `onnx:${modelName(model)}@${model.hash}`;
    this.batchSize = options.batchSize ?? 32;
    try {
      this.tokenizer = new WordPieceTokenizer(model.tokenizer);
    } catch (e) {
      throw new AfsError("INVALID_ARGUMENT", `the local embedding model ${model.dir}: ${(e as Error).message}`);
    }
  }

  get dimensions(): number | undefined {
    return this.dims;
  }

  async embed(texts: readonly string[], _kind: EmbedKind, options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const session = await this.open();
    const encoded = texts.map((t) => this.tokenizer.encode(t));
    // Shortest first, so each batch pads to a length close to its own texts'.
    const order = encoded.map((_, i) => i).sort((a, b) => (encoded[a]?.length ?? 0) - (encoded[b]?.length ?? 0));
    const out: Float32Array[] = new Array(texts.length);
    const tokens = (i: number): number => encoded[i]?.length ?? 0;
    for (const batch of batches(order, this.batchSize, MAX_BATCH_TOKENS, tokens)) {
      options.signal?.throwIfAborted();
      const vectors = await this.run(
        session,
        batch.map((i) => encoded[i] as number[]),
      );
      batch.forEach((i, k) => {
        out[i] = vectors[k] as Float32Array;
      });
    }
    return out;
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session) await (await session.catch(() => undefined))?.release();
  }

  private open(): Promise<OrtSession> {
    if (!this.session) {
      const options: Record<string, unknown> = { graphOptimizationLevel: "all", logSeverityLevel: 3 };
      if (this.options.threads) options.intraOpNumThreads = this.options.threads;
      this.session = this.runtime.InferenceSession.create(this.model.modelFile, options).then(
        (session) => this.check(session),
        (e: unknown) => {
          this.session = undefined;
          throw new AfsError(
            "INVALID_ARGUMENT",
            `onnxruntime could not load the embedding model ${this.model.modelFile}: ${(e as Error).message ?? e}; check that it is a complete ONNX file`,
            { modelFile: this.model.modelFile },
          );
        },
      );
    }
    return this.session;
  }

  private check(session: OrtSession): OrtSession {
    const unknown = session.inputNames.filter((n) => !KNOWN_INPUTS.has(n));
    if (!session.inputNames.includes("input_ids") || unknown.length > 0) {
      this.session = undefined;
      throw new AfsError(
        "INVALID_ARGUMENT",
        `the embedding model ${this.model.modelFile} takes inputs ${session.inputNames.join(", ")}; afs supplies BERT-style input_ids, attention_mask and token_type_ids only`,
      );
    }
    return session;
  }

  /** One inference over texts padded to the longest, pooled and normalized. */
  private async run(session: OrtSession, ids: number[][]): Promise<Float32Array[]> {
    const rows = ids.length;
    const width = Math.max(...ids.map((r) => r.length));
    const inputIds = new BigInt64Array(rows * width).fill(BigInt(this.tokenizer.padId));
    const mask = new BigInt64Array(rows * width);
    ids.forEach((row, r) => {
      row.forEach((id, c) => {
        inputIds[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
      });
    });
    const tensors: Record<string, BigInt64Array> = {
      input_ids: inputIds,
      attention_mask: mask,
      token_type_ids: new BigInt64Array(rows * width),
    };
    const feeds: Record<string, OrtTensor> = {};
    for (const name of session.inputNames) {
      feeds[name] = new this.runtime.Tensor("int64", tensors[name] as BigInt64Array, [rows, width]);
    }
    const results = await session.run(feeds);
    const name = OUTPUTS.find((n) => session.outputNames.includes(n)) ?? session.outputNames[0];
    const output = name === undefined ? undefined : results[name];
    if (!output || !(output.data instanceof Float32Array)) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `the embedding model ${this.model.modelFile} gave no float32 output (${name ?? "none"} is ${output?.type ?? "missing"}); use a float32 ONNX export`,
      );
    }
    const vectors = pool(output.data, output.dims, mask, rows, width, this.model.modelFile);
    this.dims = vectors[0]?.length ?? this.dims;
    return vectors.map(normalize);
  }
}

/** [rows, dim] as is; [rows, seq, dim] mean-pooled over the attention mask. */
function pool(
  data: Float32Array,
  dims: readonly number[],
  mask: BigInt64Array,
  rows: number,
  width: number,
  file: string,
): Float32Array[] {
  if (dims.length === 2 && dims[0] === rows) {
    const dim = dims[1] as number;
    return Array.from({ length: rows }, (_, r) => data.slice(r * dim, (r + 1) * dim));
  }
  if (dims.length === 3 && dims[0] === rows && dims[1] === width) {
    const dim = dims[2] as number;
    return Array.from({ length: rows }, (_, r) => {
      const sum = new Float32Array(dim);
      let count = 0;
      for (let c = 0; c < width; c++) {
        if (mask[r * width + c] === 0n) continue;
        count++;
        const at = (r * width + c) * dim;
        for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (data[at + d] as number);
      }
      if (count > 0) for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) / count;
      return sum;
    });
  }
  throw new AfsError(
    "INVALID_ARGUMENT",
    `the embedding model ${file} gave an output of shape [${dims.join(", ")}] for ${rows} texts of ${width} tokens; expected [${rows}, dim] or [${rows}, ${width}, dim]`,
  );
}
