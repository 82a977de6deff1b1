// The HTTP embedding provider: any server speaking OpenAI's POST /embeddings (OpenAI itself, Azure-style
// proxies, Ollama, vLLM, LM Studio…). Batches requests, retries rate limits and server errors with
// backoff, and turns every failure into an AfsError that says what to check.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import {
  type Endpoint,
  errorBody,
  malformed,
  refused,
  retryAfterMs,
  unreachable,
  worthRetrying,
} from "./openai-errors.js";
import { batches, type EmbeddingProvider, type EmbedKind, type EmbedOptions, normalize } from "./provider.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";
export const OPENAI_MODEL = "text-embedding-3-small";

/** Vector lengths of OpenAI's models, so dimensions is known before the first call. */
const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  "text-embedding-3-small": 1536,
  "text-embedding-3-large": 3072,
  "text-embedding-ada-002": 1536,
};

export interface OpenAiProviderOptions {
  /** Sent as a Bearer token; servers that need none (a local Ollama) may go without. */
  apiKey?: string;
  /** Default https://api.openai.com/v1; requests go to `${baseUrl}/embeddings`. */
  baseUrl?: string;
  /** Default text-embedding-3-small. */
  model?: string;
  /** Asks the model for shorter vectors (text-embedding-3 models accept `dimensions`). */
  dimensions?: number;
  /** Most inputs per request; default 96. */
  maxBatch?: number;
  /**
   * Most UTF-8 bytes of input per request; default 256 KiB. A token spans at least one byte, so this
   * also keeps a request under OpenAI's 300k-token cap.
   */
  maxRequestBytes?: number;
  /** Longer inputs are cut to this many UTF-8 bytes (within OpenAI's 8191 tokens per input); default 8000. */
  maxInputBytes?: number;
  /** Per attempt, response body included; default 60 s. */
  timeoutMs?: number;
  /** Further attempts after a 408/429/5xx, a timeout or a dropped connection; default 4. */
  maxRetries?: number;
  /** First backoff delay, doubled each retry (with jitter); default 500 ms. */
  retryBaseMs?: number;
  /** Cap on one backoff delay, Retry-After included; default 20 s. */
  maxRetryDelayMs?: number;
  /** Requests in flight at once; default 4. */
  concurrency?: number;
  /** Replaces the global fetch (tests). */
  fetch?: typeof fetch;
}

const vector = z.union([z.array(z.number()), z.string()]);
const responseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: vector })),
});

export class OpenAiEmbeddingProvider implements EmbeddingProvider {
  readonly id: string;
  readonly batchSize: number;
  readonly url: string;
  readonly model: string;
  private readonly endpoint: Endpoint;
  private dims: number | undefined;
  private readonly o: Required<Omit<OpenAiProviderOptions, "apiKey" | "dimensions">> & OpenAiProviderOptions;

  constructor(options: OpenAiProviderOptions = {}) {
    const baseUrl = (options.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, "");
    this.o = {
      baseUrl,
      model: OPENAI_MODEL,
      maxBatch: 96,
      maxRequestBytes: 256 * 1024,
      maxInputBytes: 8000,
      timeoutMs: 60_000,
      maxRetries: 4,
      retryBaseMs: 500,
      maxRetryDelayMs: 20_000,
      concurrency: 4,
      fetch: (input, init) => fetch(input, init),
      ...withoutUndefined(options),
    };
    this.model = this.o.model;
    this.url = `${baseUrl}/embeddings`;
    this.endpoint = { url: this.url, model: this.model, apiKey: options.apiKey };
    this.batchSize = this.o.maxBatch;
    const official = baseUrl === OPENAI_BASE_URL;
    this.dims = options.dimensions ?? (official ? KNOWN_DIMENSIONS[this.model] : undefined);
    // The vector space is the model (and its length) on that server; the official endpoint goes unnamed.
    const size = options.dimensions ? `/${options.dimensions}` : "";
    const server = official ? "" : `@${baseUrl.replace(/^https?:\/\//, "")}`;
    this.id = `openai:${this.model}${size}${server}`;
  }

  get dimensions(): number | undefined {
    return this.dims;
  }

  async embed(texts: readonly string[], _kind: EmbedKind, options: EmbedOptions = {}): Promise<Float32Array[]> {
    const inputs = texts.map((t, index) => ({ index, text: truncateUtf8(t, this.o.maxInputBytes) }));
    const work = batches(inputs, this.o.maxBatch, this.o.maxRequestBytes, (i) => Buffer.byteLength(i.text) + 8);
    const out: Float32Array[] = new Array(texts.length);
    // One failure stops the rest: abort what is in flight and start nothing new.
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    let next = 0;
    let failure: { error: unknown } | undefined;
    const worker = async (): Promise<void> => {
      while (next < work.length && !failure) {
        const batch = work[next++] as { index: number; text: string }[];
        try {
          const vectors = await this.request(
            batch.map((i) => i.text),
            signal,
          );
          batch.forEach((item, k) => {
            out[item.index] = vectors[k] as Float32Array;
          });
        } catch (error) {
          failure ??= { error };
          stop.abort(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency, work.length) }, worker));
    if (failure) throw options.signal?.aborted ? options.signal.reason : failure.error;
    return out;
  }

  async close(): Promise<void> {}

  /** One POST with retries; vectors in input order, normalized. */
  private async request(input: string[], signal: AbortSignal): Promise<Float32Array[]> {
    const body = JSON.stringify({
      model: this.model,
      input,
      ...(this.o.dimensions ? { dimensions: this.o.dimensions } : {}),
    });
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.o.apiKey) headers.authorization = `Bearer ${this.o.apiKey}`;
    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < this.o.maxRetries;
      let status: number;
      let text: string;
      let retryAfter: number | undefined;
      try {
        const attemptSignal = AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]);
        const response = await this.o.fetch(this.url, { method: "POST", headers, body, signal: attemptSignal });
        status = response.status;
        retryAfter = retryAfterMs(response.headers);
        text = await response.text();
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (retriesLeft) {
          await sleep(this.backoff(attempt), undefined, { signal });
          continue;
        }
        throw unreachable(this.endpoint, e, attempt + 1, this.o.timeoutMs);
      }
      if (status >= 200 && status < 300) return this.parse(text, input.length);
      const apiError = errorBody(text);
      // A server with a smaller body limit than ours: halve the batch rather than fail.
      if (status === 413 && input.length > 1) {
        const half = Math.ceil(input.length / 2);
        const first = await this.request(input.slice(0, half), signal);
        return [...first, ...(await this.request(input.slice(half), signal))];
      }
      if (retriesLeft && worthRetrying(status, apiError)) {
        await sleep(Math.min(retryAfter ?? this.backoff(attempt), this.o.maxRetryDelayMs), undefined, { signal });
        continue;
      }
      throw refused(this.endpoint, status, apiError, attempt + 1);
    }
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.o.maxRetryDelayMs, this.o.retryBaseMs * 2 ** attempt);
    return ceiling / 2 + (Math.random() * ceiling) / 2;
  }

  private parse(text: string, count: number): Float32Array[] {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw malformed(this.endpoint, "a body that is not JSON");
    }
    const parsed = responseSchema.safeParse(json);
    if (!parsed.success) throw malformed(this.endpoint, "a body without data[{index, embedding}]");
    const out: Float32Array[] = new Array(count);
    for (const item of parsed.data.data) {
      if (item.index >= count || out[item.index])
        throw malformed(this.endpoint, `a stray or repeated index ${item.index}`);
      out[item.index] = normalize(toVector(item.embedding));
    }
    const present = out.filter(Boolean).length;
    if (present !== count) throw malformed(this.endpoint, `${present} vectors for ${count} inputs`);
    const lengths = new Set(out.map((v) => v.length));
    const dims = out[0]?.length;
    if (lengths.size !== 1 || (this.dims !== undefined && dims !== this.dims) || dims === 0) {
      throw malformed(
        this.endpoint,
        `vectors of length ${[...lengths].join(", ")} where ${this.dims ?? "one length"} was expected`,
      );
    }
    this.dims = dims;
    return out;
  }
}

/** A JSON array, or base64 of little-endian float32s (encoding_format: base64). */
function toVector(embedding: number[] | string): Float32Array {
  if (Array.isArray(embedding)) return Float32Array.from(embedding);
  const bytes = Buffer.from(embedding, "base64");
  return new Float32Array(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength - (bytes.byteLength % 4)),
  );
}

/** Cuts `text` to at most `max` UTF-8 bytes without splitting a character; empty text becomes " " (the API refuses ""). */
export function truncateUtf8(text: string, max: number): string {
  if (text === "") return " ";
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
