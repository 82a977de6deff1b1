import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddingsServer } from "../../../test/helpers/embeddings-server.js";
import { writeTinyModel } from "../../../test/helpers/tiny-embedding-model.js";
import { tempDir } from "../../../test/helpers/tmp.js";
import { AfsError } from "../../core/errors.js";
import { DISABLED, EmbeddingProviders, NOT_CONFIGURED, readEmbeddingConfig, withPrefixes } from "./open.js";
import type { EmbeddingProvider } from "./provider.js";

let root: string;
let cleanup: () => Promise<void>;
let modelDir: string;
// The providers these tests open, as an engine keeps its own.
const providers = new EmbeddingProviders();
const openEmbeddingProvider: EmbeddingProviders["open"] = (env, options) => providers.open(env, options);

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("afs-embed-open-"));
  modelDir = join(root, "tiny");
  await writeTinyModel(modelDir);
});
afterAll(async () => {
  await providers.close();
  await cleanup();
});

function refusal(f: () => unknown): AfsError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(AfsError);
    return e as AfsError;
  }
  throw new Error("expected an AfsError");
}

describe("readEmbeddingConfig chooses from the environment", () => {
  it("is none, saying how to enable semantic search, when nothing is set", () => {
    expect(readEmbeddingConfig({})).toEqual({ provider: "none", unavailable: NOT_CONFIGURED });
    expect(NOT_CONFIGURED).toMatch(/OPENAI_API_KEY.*AFS_EMBED_BASE_URL.*AFS_EMBED_MODEL_DIR/);
  });

  it("is openai with OpenAI's endpoint and model when only an API key is set", () => {
    expect(readEmbeddingConfig({ OPENAI_API_KEY: "sk-1" })).toMatchObject({
      provider: "openai",
      apiKey: "sk-1",
      baseUrl: "https://api.openai.com/v1",
      model: "text-embedding-3-small",
    });
    expect(readEmbeddingConfig({ OPENAI_API_KEY: "sk-1", AFS_EMBED_API_KEY: "sk-2" })).toMatchObject({
      apiKey: "sk-2",
    });
  });

  it("takes base URL, model, dimensions and timeout for openai", () => {
    const env = {
      OPENAI_API_KEY: "k",
      AFS_EMBED_BASE_URL: "http://localhost:11434/v1",
      AFS_EMBED_MODEL: "nomic-embed-text",
      AFS_EMBED_DIMENSIONS: "256",
      AFS_EMBED_TIMEOUT_MS: "5000",
    };
    expect(readEmbeddingConfig(env)).toMatchObject({
      provider: "openai",
      baseUrl: "http://localhost:11434/v1",
      model: "nomic-embed-text",
      dimensions: 256,
      timeoutMs: 5000,
    });
    // A self-hosted server may need no key.
    expect(
      readEmbeddingConfig({ AFS_EMBED_PROVIDER: "openai", AFS_EMBED_BASE_URL: "http://127.0.0.1:1/v1" }),
    ).toMatchObject({ provider: "openai", apiKey: undefined });
  });

  it("is local when a model directory is set, even beside an API key", () => {
    expect(readEmbeddingConfig({ AFS_EMBED_MODEL_DIR: "/m" })).toMatchObject({ provider: "local", dir: "/m" });
    expect(readEmbeddingConfig({ AFS_EMBED_MODEL_DIR: "/m", OPENAI_API_KEY: "k" })).toMatchObject({
      provider: "local",
    });
    expect(
      readEmbeddingConfig({
        AFS_EMBED_MODEL_DIR: "/m",
        AFS_EMBED_MODEL_FILE: "onnx/model_quantized.onnx",
        AFS_EMBED_THREADS: "2",
      }),
    ).toMatchObject({ modelFile: "onnx/model_quantized.onnx", threads: 2 });
  });

  it("follows AFS_EMBED_PROVIDER over the defaults (any case)", () => {
    expect(
      readEmbeddingConfig({ AFS_EMBED_PROVIDER: "OpenAI", AFS_EMBED_MODEL_DIR: "/m", OPENAI_API_KEY: "k" }),
    ).toMatchObject({ provider: "openai" });
    expect(readEmbeddingConfig({ AFS_EMBED_PROVIDER: "none", OPENAI_API_KEY: "k" })).toEqual({
      provider: "none",
      unavailable: DISABLED,
    });
    expect(readEmbeddingConfig({ AFS_EMBED_PROVIDER: "", OPENAI_API_KEY: "k" })).toMatchObject({ provider: "openai" });
  });

  it("refuses misconfiguration with what to fix", () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ AFS_EMBED_PROVIDER: "cohere" }, /AFS_EMBED_PROVIDER must be openai, local, none or unset; got "cohere"/],
      [{ AFS_EMBED_PROVIDER: "local" }, /AFS_EMBED_PROVIDER=local needs AFS_EMBED_MODEL_DIR/],
      [{ AFS_EMBED_PROVIDER: "openai" }, /needs an API key: set OPENAI_API_KEY/],
      [{ OPENAI_API_KEY: "k", AFS_EMBED_BASE_URL: "api.openai.com" }, /AFS_EMBED_BASE_URL must be an http\(s\) URL/],
      [{ OPENAI_API_KEY: "k", AFS_EMBED_DIMENSIONS: "wide" }, /AFS_EMBED_DIMENSIONS must be a whole number/],
      [{ AFS_EMBED_MODEL_DIR: "/m", AFS_EMBED_THREADS: "0" }, /AFS_EMBED_THREADS must be a whole number/],
    ];
    for (const [env, message] of cases) {
      const e = refusal(() => readEmbeddingConfig(env));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toMatch(message);
    }
  });
});

describe("openEmbeddingProvider", () => {
  it("returns null with the warning when semantic search is off", async () => {
    expect(await openEmbeddingProvider({})).toEqual({ provider: null, unavailable: NOT_CONFIGURED });
  });

  it("opens the HTTP provider and embeds through it", async () => {
    const server = await startEmbeddingsServer();
    try {
      const { provider } = await openEmbeddingProvider({
        AFS_EMBED_API_KEY: "test-key",
        AFS_EMBED_BASE_URL: server.baseUrl,
        AFS_EMBED_MODEL: "test-model",
      });
      expect(provider?.id).toMatch(/^openai:test-model@127\.0\.0\.1:\d+\/v1$/);
      expect(await provider?.embed(["hi"], "query")).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("opens the local provider once per configuration and reopens it when the model file changes", async () => {
    const env = { AFS_EMBED_MODEL_DIR: modelDir };
    const first = await openEmbeddingProvider(env);
    expect(first.provider?.id).toMatch(/^onnx:tiny@[0-9a-f]{12}$/);
    const [v] = (await first.provider?.embed(["cat"], "query")) ?? [];
    expect(v).toHaveLength(8);
    expect((await openEmbeddingProvider(env)).provider).toBe(first.provider);
    expect((await openEmbeddingProvider(env, { cache: false })).provider).not.toBe(first.provider);

    await writeTinyModel(modelDir, { seed: 7 });
    const changed = await openEmbeddingProvider(env);
    expect(changed.provider).not.toBe(first.provider);
    expect(changed.provider?.id).not.toBe(first.provider?.id);
  });

  it("throws what to fix for a directory without a model, and does not remember the failure", async () => {
    const dir = join(root, "empty-model");
    await writeTinyModel(dir);
    await rm(join(dir, "model.onnx"));
    const env = { AFS_EMBED_MODEL_DIR: dir };
    await expect(openEmbeddingProvider(env)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringMatching(/has no model\.onnx or onnx\/model\.onnx/),
    });
    await writeTinyModel(dir);
    expect((await openEmbeddingProvider(env)).provider).not.toBeNull();
  });

  it("says how to do without onnxruntime-node when it cannot load", async () => {
    const missing = Object.assign(new Error("Cannot find package"), { code: "ERR_MODULE_NOT_FOUND" });
    await expect(
      openEmbeddingProvider(
        { AFS_EMBED_MODEL_DIR: modelDir },
        { cache: false, importRuntime: () => Promise.reject(missing) },
      ),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/npm install onnxruntime-node.*AFS_EMBED_PROVIDER=openai or none/),
    });
  });

  it("puts query and document prefixes before texts, and names them in the id", async () => {
    const seen: string[][] = [];
    const inner: EmbeddingProvider = {
      id: "fake:model",
      dimensions: 1,
      batchSize: 4,
      embed: async (texts) => {
        seen.push([...texts]);
        return texts.map(() => Float32Array.of(1));
      },
      close: async () => {},
    };
    const prefixed = withPrefixes(inner, { queryPrefix: "query: ", documentPrefix: "passage: " });
    await prefixed.embed(["a"], "query");
    await prefixed.embed(["b"], "document");
    expect(seen).toEqual([["query: a"], ["passage: b"]]);
    expect(prefixed.id).toMatch(/^fake:model\+prefix:[0-9a-f]{8}$/);
    expect(withPrefixes(inner, {})).toBe(inner);
    expect(withPrefixes(inner, { queryPrefix: "q: " }).id).not.toBe(prefixed.id);

    const config = readEmbeddingConfig({ AFS_EMBED_MODEL_DIR: modelDir, AFS_EMBED_QUERY_PREFIX: "query: " });
    expect(config).toMatchObject({ queryPrefix: "query: " });
    const { provider } = await openEmbeddingProvider({
      AFS_EMBED_MODEL_DIR: modelDir,
      AFS_EMBED_QUERY_PREFIX: "query: ",
    });
    expect(provider?.id).toMatch(/^onnx:tiny@[0-9a-f]{12}\+prefix:[0-9a-f]{8}$/);
  });

  it("rejects a tokenizer_config.json that is not JSON", async () => {
    const dir = join(root, "bad-json");
    await writeTinyModel(dir);
    await writeFile(join(dir, "tokenizer_config.json"), "[1,2]");
    await expect(openEmbeddingProvider({ AFS_EMBED_MODEL_DIR: dir })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
