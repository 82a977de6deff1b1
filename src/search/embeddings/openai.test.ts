import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type EmbeddingsServer,
  startEmbeddingsServer,
  TEST_DIMENSIONS,
  testVector,
} from "../../../test/helpers/embeddings-server.js";
import { failure } from "../../../test/helpers/failure.js";
import { OpenAiEmbeddingProvider, type OpenAiProviderOptions, truncateUtf8 } from "./openai.js";
import { normalize } from "./provider.js";

let server: EmbeddingsServer;
beforeEach(async () => {
  server = await startEmbeddingsServer();
});
afterEach(async () => {
  await server.close();
});

const provider = (options: OpenAiProviderOptions = {}): OpenAiEmbeddingProvider =>
  new OpenAiEmbeddingProvider({
    baseUrl: server.baseUrl,
    apiKey: "test-key",
    model: "test-model",
    retryBaseMs: 5,
    ...options,
  });

const expected = (text: string): Float32Array => normalize(Float32Array.from(testVector(text)));

describe("OpenAiEmbeddingProvider against a local embeddings server", () => {
  it("posts {model, input} with the bearer key and returns unit vectors in input order", async () => {
    const p = provider();
    const texts = ["alpha", "beta gamma", "delta"];
    const vectors = await p.embed(texts, "document");
    expect(vectors).toHaveLength(3);
    texts.forEach((t, i) => {
      expect(Array.from(vectors[i] as Float32Array)).toEqual(Array.from(expected(t)));
    });
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    expect(server.requests).toEqual([{ model: "test-model", input: texts, authorization: "Bearer test-key" }]);
    expect(p.dimensions).toBe(TEST_DIMENSIONS);
    expect(p.id).toBe(`openai:test-model@${server.baseUrl.replace("http://", "")}`);
  });

  it("names the official endpoint by model alone and knows its vector length up front", () => {
    const official = new OpenAiEmbeddingProvider({ apiKey: "k" });
    expect(official.id).toBe("openai:text-embedding-3-small");
    expect(official.dimensions).toBe(1536);
    const shorter = new OpenAiEmbeddingProvider({ apiKey: "k", model: "text-embedding-3-large", dimensions: 256 });
    expect(shorter.id).toBe("openai:text-embedding-3-large/256");
    expect(shorter.dimensions).toBe(256);
  });

  it("sends dimensions when asked", async () => {
    const p = provider({ dimensions: 8 });
    const [v] = await p.embed(["x"], "query");
    expect(v).toHaveLength(8);
    expect(server.requests[0]?.dimensions).toBe(8);
  });

  it("splits many inputs into batches of at most maxBatch, in order", async () => {
    const texts = Array.from({ length: 250 }, (_, i) => `text number ${i}`);
    const vectors = await provider().embed(texts, "document");
    expect(server.requests.map((r) => r.input.length)).toEqual([96, 96, 58]);
    expect(server.requests.flatMap((r) => r.input)).toEqual(texts);
    texts.forEach((t, i) => {
      expect(Array.from(vectors[i] as Float32Array)).toEqual(Array.from(expected(t)));
    });
  });

  it("caps the bytes per request and cuts over-long inputs at a character boundary", async () => {
    const texts = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(1000, "x"));
    await provider({ maxRequestBytes: 4096, concurrency: 1 }).embed(texts, "document");
    expect(server.requests.map((r) => r.input.length)).toEqual([4, 4, 2]);

    server.requests.length = 0;
    await provider({ maxInputBytes: 7 }).embed(["ééééé", "short", ""], "document");
    // Six bytes hold three é; the fourth would split a character. The API refuses "", so it gets " ".
    expect(server.requests[0]?.input).toEqual(["ééé", "short", " "]);
  });

  it("halves a batch the server finds too large", async () => {
    server.script.push({ status: 413, body: { error: { message: "request entity too large" } } });
    const texts = ["one", "two", "three", "four", "five"];
    const vectors = await provider().embed(texts, "document");
    expect(server.requests.map((r) => r.input)).toEqual([texts, ["one", "two", "three"], ["four", "five"]]);
    texts.forEach((t, i) => {
      expect(Array.from(vectors[i] as Float32Array)).toEqual(Array.from(expected(t)));
    });
    server.script.push({ status: 413 });
    const e = await failure(provider().embed(["one"], "document"));
    expect(e.message).toMatch(/refused even a single input as too large \(HTTP 413/);
  });

  it("keeps at most `concurrency` requests in flight", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `t${i}`);
    await provider({ maxBatch: 2, concurrency: 3 }).embed(texts, "document");
    expect(server.requests).toHaveLength(20);
    expect(server.maxInFlight).toBeLessThanOrEqual(3);
  });

  it("retries a 429 after the server's retry-after and then succeeds", async () => {
    server.script.push({
      status: 429,
      headers: { "retry-after-ms": "30" },
      body: { error: { message: "Rate limit reached", code: "rate_limit_exceeded" } },
    });
    const started = Date.now();
    const [v] = await provider().embed(["hello"], "query");
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(Array.from(v as Float32Array)).toEqual(Array.from(expected("hello")));
    expect(server.requests).toHaveLength(2);
  });

  it("retries 5xx and gives up after maxRetries with what went wrong", async () => {
    server.script.push({ status: 502 }, { status: 503 });
    await provider().embed(["a"], "document");
    expect(server.requests).toHaveLength(3);

    server.requests.length = 0;
    server.script.push(...Array.from({ length: 5 }, () => ({ status: 429 })));
    const e = await failure(provider({ maxRetries: 2 }).embed(["a"], "document"));
    expect(e.code).toBe("QUOTA_EXCEEDED");
    expect(e.message).toMatch(/rate-limiting.*HTTP 429.*after 3 attempts/);
    expect(server.requests).toHaveLength(3);
    server.script.length = 0;
  });

  it("does not retry an exhausted quota", async () => {
    server.script.push({
      status: 429,
      body: { error: { message: "You exceeded your current quota", code: "insufficient_quota" } },
    });
    const e = await failure(provider().embed(["a"], "document"));
    expect(e.code).toBe("QUOTA_EXCEEDED");
    expect(e.message).toMatch(/quota is used up.*exceeded your current quota.*billing/);
    expect(server.requests).toHaveLength(1);
  });

  it("maps 401 to PERMISSION_DENIED pointing at OPENAI_API_KEY, without retrying or echoing the key", async () => {
    const e = await failure(provider({ apiKey: "sk-wrong-key-123456" }).embed(["a"], "document"));
    expect(e.code).toBe("PERMISSION_DENIED");
    expect(e.message).toMatch(/rejected the API key \(HTTP 401: Incorrect API key provided.*check OPENAI_API_KEY/);
    expect(e.message).not.toContain("sk-wrong-key-123456");
    expect(e.details).toMatchObject({ status: 401, attempts: 1 });
  });

  it("maps an unknown model to a message about AFS_EMBED_MODEL", async () => {
    const e = await failure(provider({ model: "no-such-model" }).embed(["a"], "document"));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toMatch(/no such model.*does not exist.*AFS_EMBED_MODEL and AFS_EMBED_BASE_URL/);
  });

  it("times out a silent server", async () => {
    server.script.push({ status: 200, delayMs: 2000 });
    const e = await failure(provider({ timeoutMs: 100, maxRetries: 0 }).embed(["a"], "document"));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toMatch(/did not answer within 0.1 s/);
    server.script.length = 0;
  });

  it("reports an unreachable endpoint after its retries", async () => {
    const url = server.baseUrl;
    await server.close();
    const e = await failure(
      new OpenAiEmbeddingProvider({ baseUrl: url, retryBaseMs: 1, maxRetries: 1 }).embed(["a"], "document"),
    );
    expect(e.code).toBe("IO_ERROR");
    expect(e.message).toMatch(/could not reach the embeddings endpoint .*ECONNREFUSED.*2 attempts.*AFS_EMBED_BASE_URL/);
    server = await startEmbeddingsServer();
  });

  it("refuses answers that do not fit the request", async () => {
    server.script.push({ status: 200, body: { data: [{ index: 0, embedding: [1, 0] }] } });
    const short = await failure(provider().embed(["a", "b"], "document"));
    expect(short.code).toBe("IO_ERROR");
    expect(short.message).toMatch(/1 vectors for 2 inputs/);

    server.script.push({ status: 200, body: "<html>proxy login</html>" });
    expect((await failure(provider().embed(["a"], "document"))).message).toMatch(/without data/);

    server.script.push({ status: 200, body: { data: [{ index: 0, embedding: [1, 0] }] } });
    const p = provider();
    await p.embed(["a"], "document");
    server.script.push({ status: 200, body: { data: [{ index: 0, embedding: [1, 0, 0] }] } });
    expect((await failure(p.embed(["a"], "document"))).message).toMatch(/length 3 where 2 was expected/);
  });

  it("accepts base64 embeddings", async () => {
    const b64 = await startEmbeddingsServer({ base64: true });
    try {
      const p = new OpenAiEmbeddingProvider({ baseUrl: b64.baseUrl, apiKey: "test-key", model: "test-model" });
      const [v] = await p.embed(["base sixty-four"], "document");
      expect(Array.from(v as Float32Array)).toEqual(Array.from(expected("base sixty-four")));
    } finally {
      await b64.close();
    }
  });

  it("stops when the caller aborts", async () => {
    server.script.push({ status: 200, delayMs: 1000 });
    const controller = new AbortController();
    const pending = provider().embed(["a"], "document", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await expect(pending).rejects.toThrow("caller gave up");
    server.script.length = 0;
  });

  it("returns [] for no texts without a request", async () => {
    expect(await provider().embed([], "document")).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});

describe("truncateUtf8", () => {
  it("cuts on character boundaries", () => {
    expect(truncateUtf8("abc", 10)).toBe("abc");
    expect(truncateUtf8("abcdef", 4)).toBe("abcd");
    expect(truncateUtf8("€€", 5)).toBe("€");
    expect(truncateUtf8("a😀b", 4)).toBe("a");
    expect(truncateUtf8("a😀b", 5)).toBe("a😀");
  });
});
