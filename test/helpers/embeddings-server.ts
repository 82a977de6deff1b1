// A small OpenAI-compatible embeddings server on a loopback port, for testing the HTTP provider (and
// anything built on it) for real: POST /v1/embeddings with a bearer token, vectors derived from the
// text, answered out of order, with scripted failures for the retry and error paths.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (for timeouts). */
  delayMs?: number;
}

export interface EmbeddingsRequest {
  model: string;
  input: string[];
  dimensions?: number;
  authorization?: string;
}

export interface EmbeddingsServer {
  /** e.g. http://127.0.0.1:41234/v1 */
  baseUrl: string;
  /** Every request that reached /v1/embeddings with a valid key, in arrival order. */
  requests: EmbeddingsRequest[];
  /** Replies used, one per request, before normal service resumes. */
  script: ScriptedReply[];
  /** Most requests in flight at once so far. */
  maxInFlight: number;
  close(): Promise<void>;
}

export const TEST_DIMENSIONS = 16;

/**
 * A deterministic vector for a text (not normalized, so the provider's normalization shows): letter
 * counts folded into TEST_DIMENSIONS slots, plus one so no vector is zero.
 */
export function testVector(text: string, dimensions = TEST_DIMENSIONS): number[] {
  const v = new Array<number>(dimensions).fill(0);
  v[0] = 1;
  for (const ch of text.toLowerCase()) {
    const c = ch.codePointAt(0) as number;
    v[c % dimensions] = (v[c % dimensions] as number) + 1;
  }
  return v;
}

export interface ServerOptions {
  apiKey?: string;
  /** Answer with embeddings as base64 float32 instead of arrays. */
  base64?: boolean;
  /** Models the server knows; others get a 404 as OpenAI sends it. */
  models?: string[];
}

export async function startEmbeddingsServer(options: ServerOptions = {}): Promise<EmbeddingsServer> {
  const apiKey = options.apiKey ?? "test-key";
  const models = options.models ?? ["test-model"];
  let inFlight = 0;
  const state: Omit<EmbeddingsServer, "baseUrl" | "close"> = { requests: [], script: [], maxInFlight: 0 };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/v1/embeddings") {
      return send(404, { error: { message: `no route ${req.method} ${req.url}`, code: null } });
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return send(401, {
        error: {
          message: "Incorrect API key provided: sk-...",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as EmbeddingsRequest;
    state.requests.push({ ...body, authorization: req.headers.authorization });
    const scripted = state.script.shift();
    if (scripted) {
      if (scripted.delayMs) await new Promise((r) => setTimeout(r, scripted.delayMs));
      return send(
        scripted.status,
        scripted.body ?? { error: { message: `scripted ${scripted.status}` } },
        scripted.headers,
      );
    }
    if (!models.includes(body.model)) {
      return send(404, { error: { message: `The model \`${body.model}\` does not exist`, code: "model_not_found" } });
    }
    const data = body.input.map((text, index) => {
      const v = testVector(text, body.dimensions ?? TEST_DIMENSIONS);
      const embedding = options.base64 ? Buffer.from(Float32Array.from(v).buffer).toString("base64") : v;
      return { object: "embedding", index, embedding };
    });
    // Out of order on purpose: clients must place vectors by index.
    send(200, {
      object: "list",
      data: data.reverse(),
      model: body.model,
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  };

  const server = createServer((req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    handle(req, res).catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
