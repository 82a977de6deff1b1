// Chooses and opens the embedding provider from AFS_EMBED_* settings: the OpenAI-compatible endpoint,
// a local ONNX model directory, or none (with the sentence semantic search shows on how to enable it).
// Opened providers are kept per configuration by their owner (an engine), so a query does not reload a model.
import { createHash } from "node:crypto";
import { AfsError } from "../../core/errors.js";
import type { Env } from "../../core/settings.js";
import { fingerprintModel } from "./model-dir.js";
import { type OnnxEmbeddingProvider, type OnnxProviderOptions, openOnnxProvider } from "./onnx.js";
import { OPENAI_BASE_URL, OPENAI_MODEL, OpenAiEmbeddingProvider, type OpenAiProviderOptions } from "./openai.js";
import type { EmbeddingProvider } from "./provider.js";

/** Every setting and the variable it comes from. */
export const EMBEDDING_ENV = {
  provider: "AFS_EMBED_PROVIDER",
  apiKey: "AFS_EMBED_API_KEY",
  openaiKey: "OPENAI_API_KEY",
  baseUrl: "AFS_EMBED_BASE_URL",
  model: "AFS_EMBED_MODEL",
  dimensions: "AFS_EMBED_DIMENSIONS",
  timeoutMs: "AFS_EMBED_TIMEOUT_MS",
  modelDir: "AFS_EMBED_MODEL_DIR",
  modelFile: "AFS_EMBED_MODEL_FILE",
  threads: "AFS_EMBED_THREADS",
  queryPrefix: "AFS_EMBED_QUERY_PREFIX",
  documentPrefix: "AFS_EMBED_DOCUMENT_PREFIX",
} as const;

const PROVIDERS = ["openai", "local", "none"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Texts put before each input by kind, for models trained with them (e5: "query: ", "passage: "). */
export interface Prefixes {
  queryPrefix?: string;
  documentPrefix?: string;
}

export type EmbeddingConfig =
  | { provider: "none"; unavailable: string }
  | ({ provider: "openai" } & OpenAiProviderOptions & Prefixes)
  | ({ provider: "local" } & OnnxProviderOptions & Prefixes);

/** A provider, or null with the warning semantic search shows instead. */
export type EmbeddingSetup =
  | { readonly provider: EmbeddingProvider; readonly unavailable?: undefined }
  | { readonly provider: null; readonly unavailable: string };

const HOW_TO_ENABLE =
  "set OPENAI_API_KEY to use OpenAI embeddings (AFS_EMBED_BASE_URL and AFS_EMBED_MODEL point it at any OpenAI-compatible server), or AFS_EMBED_MODEL_DIR to a local ONNX sentence-transformers model directory (model.onnx + vocab.txt, e.g. a download of Xenova/all-MiniLM-L6-v2)";

export const NOT_CONFIGURED = `semantic search is off: no embedding provider is configured; ${HOW_TO_ENABLE}`;
export const DISABLED = `semantic search is off (AFS_EMBED_PROVIDER=none); unset it or set it to openai or local, then ${HOW_TO_ENABLE}`;

const invalid = (message: string): AfsError => new AfsError("INVALID_ARGUMENT", message);

/**
 * Reads the settings. AFS_EMBED_PROVIDER chooses; unset, a model directory means local, else an API
 * key means openai, else none. (The directory wins over the key: OPENAI_API_KEY is often exported for
 * other tools, and a user who named a local model did not ask for file contents to leave the machine.)
 */
export function readEmbeddingConfig(env: Env): EmbeddingConfig {
  const get = (name: keyof typeof EMBEDDING_ENV): string | undefined => {
    const value = env[EMBEDDING_ENV[name]]?.trim();
    return value === "" ? undefined : value;
  };
  const named = get("provider")?.toLowerCase();
  if (named !== undefined && !(PROVIDERS as readonly string[]).includes(named)) {
    throw invalid(`AFS_EMBED_PROVIDER must be ${PROVIDERS.join(", ")} or unset; got ${JSON.stringify(named)}`);
  }
  const apiKey = get("apiKey") ?? get("openaiKey");
  const dir = get("modelDir");
  const provider = (named ?? (dir ? "local" : apiKey ? "openai" : "none")) as ProviderName;
  const prefixes: Prefixes = {
    queryPrefix: env[EMBEDDING_ENV.queryPrefix] || undefined,
    documentPrefix: env[EMBEDDING_ENV.documentPrefix] || undefined,
  };
  if (provider === "none") return { provider, unavailable: named === "none" ? DISABLED : NOT_CONFIGURED };
  if (provider === "local") {
    if (!dir) {
      throw invalid(
        "AFS_EMBED_PROVIDER=local needs AFS_EMBED_MODEL_DIR: the path of a sentence-transformers model exported to ONNX (model.onnx + vocab.txt, e.g. a download of Xenova/all-MiniLM-L6-v2)",
      );
    }
    return { provider, dir, modelFile: get("modelFile"), threads: whole(env, "threads"), ...prefixes };
  }
  const baseUrl = get("baseUrl") ?? OPENAI_BASE_URL;
  if (!/^https?:\/\/[^/]/.test(baseUrl) || !URL.canParse(baseUrl)) {
    throw invalid(
      `AFS_EMBED_BASE_URL must be an http(s) URL such as ${OPENAI_BASE_URL}; got ${JSON.stringify(baseUrl)}`,
    );
  }
  // A self-hosted server may need no key; OpenAI itself always does.
  if (!apiKey && baseUrl.replace(/\/+$/, "") === OPENAI_BASE_URL) {
    throw invalid(
      "AFS_EMBED_PROVIDER=openai needs an API key: set OPENAI_API_KEY (or AFS_EMBED_API_KEY), or AFS_EMBED_BASE_URL for a server that needs none",
    );
  }
  return {
    provider,
    apiKey,
    baseUrl,
    model: get("model") ?? OPENAI_MODEL,
    dimensions: whole(env, "dimensions"),
    timeoutMs: whole(env, "timeoutMs"),
    ...prefixes,
  };
}

function whole(env: Env, name: keyof typeof EMBEDDING_ENV): number | undefined {
  const raw = env[EMBEDDING_ENV[name]]?.trim();
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw invalid(`${EMBEDDING_ENV[name]} must be a whole number of at least 1; got ${JSON.stringify(raw)}`);
  }
  return value;
}

export interface OpenOptions {
  /** Reuse the provider opened earlier for the same settings (default true). */
  cache?: boolean;
  /** Passed to the local provider (tests simulate a missing onnxruntime-node with it). */
  importRuntime?: OnnxProviderOptions["importRuntime"];
}

interface Cached {
  setup: Promise<EmbeddingSetup>;
  local?: OnnxEmbeddingProvider;
}

/**
 * The providers one owner (an engine) has opened, kept per configuration so a query does not
 * reload a model; closing the owner closes them.
 */
export class EmbeddingProviders {
  private readonly cache = new Map<string, Cached>();

  /** The provider `env` configures, or null with how to enable one; misconfiguration throws. */
  open(env: Env, options: OpenOptions = {}): Promise<EmbeddingSetup> {
    return this.openConfigured(readEmbeddingConfig(env), options);
  }

  async openConfigured(config: EmbeddingConfig, options: OpenOptions = {}): Promise<EmbeddingSetup> {
    if (config.provider === "none") return { provider: null, unavailable: config.unavailable };
    if (options.cache === false) return (await create(config, options)).setup;
    const key = JSON.stringify(config);
    const hit = this.cache.get(key);
    if (hit) {
      const setup = await hit.setup;
      const local = hit.local;
      // A replaced model file means a new vector space: reopen so the id changes with it.
      if (!local || (await fingerprintModel(local.model.dir, local.model.modelFile)) === local.model.fingerprint) {
        return setup;
      }
      this.cache.delete(key);
      await local.close();
    }
    const entry: Cached = {
      setup: create(config, options).then((c) => {
        entry.local = c.local;
        return c.setup;
      }),
    };
    this.cache.set(key, entry);
    entry.setup.catch(() => this.cache.delete(key));
    return entry.setup;
  }

  /** Closes every provider opened (frees ONNX sessions), e.g. when the engine closes. */
  async close(): Promise<void> {
    const entries = [...this.cache.values()];
    this.cache.clear();
    await Promise.all(entries.map(async (e) => (await e.setup.catch(() => undefined))?.provider?.close()));
  }
}

async function create(
  config: Exclude<EmbeddingConfig, { provider: "none" }>,
  options: OpenOptions,
): Promise<{ setup: EmbeddingSetup; local?: OnnxEmbeddingProvider }> {
  const { provider: _, queryPrefix, documentPrefix, ...rest } = config;
  if (config.provider === "openai") {
    const provider = new OpenAiEmbeddingProvider(rest as OpenAiProviderOptions);
    return { setup: { provider: withPrefixes(provider, { queryPrefix, documentPrefix }) } };
  }
  const local = await openOnnxProvider({ ...(rest as OnnxProviderOptions), importRuntime: options.importRuntime });
  return { setup: { provider: withPrefixes(local, { queryPrefix, documentPrefix }) }, local };
}

/** Puts the configured prefix before each text by kind; the id names the prefixes, as they change the vectors. */
export function withPrefixes(provider: EmbeddingProvider, prefixes: Prefixes): EmbeddingProvider {
  const query = prefixes.queryPrefix ?? "";
  const document = prefixes.documentPrefix ?? "";
  if (query === "" && document === "") return provider;
  const tag = createHash("sha256").update(`${query}\0${document}`).digest("hex").slice(0, 8);
  return {
    id: `${provider.id}+prefix:${tag}`,
    get dimensions() {
      return provider.dimensions;
    },
    batchSize: provider.batchSize,
    embed: (texts, kind, options) =>
      provider.embed(
        texts.map((t) => (kind === "query" ? query : document) + t),
        kind,
        options,
      ),
    close: () => provider.close(),
  };
}
