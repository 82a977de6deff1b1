// Embedding providers for semantic search: the interface, the two providers and the choice between
// them from AFS_EMBED_* settings. file_query imports from here.

export { type ModelDir, readModelDir } from "./model-dir.js";
export { loadOnnxRuntime, OnnxEmbeddingProvider, type OnnxProviderOptions, openOnnxProvider } from "./onnx.js";
export {
  DISABLED,
  EMBEDDING_ENV,
  type EmbeddingConfig,
  EmbeddingProviders,
  type EmbeddingSetup,
  NOT_CONFIGURED,
  readEmbeddingConfig,
  withPrefixes,
} from "./open.js";
export { OPENAI_BASE_URL, OPENAI_MODEL, OpenAiEmbeddingProvider, type OpenAiProviderOptions } from "./openai.js";
export {
  batches,
  cosine,
  dot,
  type EmbeddingProvider,
  type EmbedKind,
  type EmbedOptions,
  normalize,
  vectorFromBytes,
  vectorToBytes,
} from "./provider.js";
export { WordPieceTokenizer } from "./wordpiece.js";
