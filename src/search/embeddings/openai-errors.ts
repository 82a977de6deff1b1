// How the embeddings endpoint's failures read: each HTTP refusal, network failure or malformed
// answer becomes an AfsError whose message says what went wrong and which setting to check.
import { AfsError, type ErrorCode } from "../../core/errors.js";

/** What the messages name (the key only to keep it out of them). */
export interface Endpoint {
  url: string;
  model: string;
  apiKey?: string;
}

export interface ApiError {
  message?: string;
  code?: string;
}

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Rate limits, timeouts and server errors pass; an exhausted quota is a 429 too, but no wait fixes it. */
export const worthRetrying = (status: number, error: ApiError): boolean =>
  RETRYABLE.has(status) && error.code !== "insufficient_quota";

/** What each refusal means and what to check; statuses not listed are IO_ERROR. */
const STATUS_ERRORS: Readonly<Record<number, { code: ErrorCode; what: string; fix: string }>> = {
  400: { code: "INVALID_ARGUMENT", what: "refused the request", fix: "check AFS_EMBED_MODEL and AFS_EMBED_DIMENSIONS" },
  401: {
    code: "PERMISSION_DENIED",
    what: "rejected the API key",
    fix: "check OPENAI_API_KEY (or AFS_EMBED_API_KEY, which overrides it)",
  },
  403: {
    code: "PERMISSION_DENIED",
    what: "does not let this API key use the model",
    fix: "check the key's project permissions and AFS_EMBED_MODEL",
  },
  404: {
    code: "INVALID_ARGUMENT",
    what: "has no such model or endpoint",
    fix: "check AFS_EMBED_MODEL and AFS_EMBED_BASE_URL (the base ends in /v1; afs appends /embeddings)",
  },
  413: {
    code: "INVALID_ARGUMENT",
    what: "refused even a single input as too large",
    fix: "raise the server's request size limit",
  },
  429: {
    code: "QUOTA_EXCEEDED",
    what: "kept rate-limiting the requests",
    fix: "wait and retry, or raise the account's rate limits",
  },
};

/** An HTTP refusal (after `attempts` tries). */
export function refused(endpoint: Endpoint, status: number, error: ApiError, attempts: number): AfsError {
  const known =
    error.code === "insufficient_quota"
      ? {
          code: "QUOTA_EXCEEDED" as const,
          what: "says the account's quota is used up",
          fix: "check the plan and billing",
        }
      : STATUS_ERRORS[status];
  const said = error.message ? `: ${redact(error.message, endpoint.apiKey)}` : "";
  const what = known?.what ?? (status >= 500 ? "failed" : "refused the request");
  const fix = known?.fix ?? (status >= 500 ? "try again later" : "check AFS_EMBED_BASE_URL and AFS_EMBED_MODEL");
  const tries = attempts > 1 ? ` after ${attempts} attempts` : "";
  return new AfsError(
    known?.code ?? "IO_ERROR",
    `the embeddings endpoint ${endpoint.url} ${what} (HTTP ${status}${said})${tries}; ${fix}`,
    { url: endpoint.url, model: endpoint.model, status, attempts, ...(error.code ? { apiCode: error.code } : {}) },
  );
}

/** No answer: a timeout, or a connection that failed. */
export function unreachable(endpoint: Endpoint, e: unknown, attempts: number, timeoutMs: number): AfsError {
  const details = { url: endpoint.url, model: endpoint.model, attempts };
  if ((e as Error)?.name === "TimeoutError") {
    return new AfsError(
      "TIMEOUT",
      `the embeddings endpoint ${endpoint.url} did not answer within ${timeoutMs / 1000} s (${attempts} attempts); check AFS_EMBED_BASE_URL or raise AFS_EMBED_TIMEOUT_MS`,
      details,
    );
  }
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (e as Error)?.message ?? String(e);
  return new AfsError(
    "IO_ERROR",
    `could not reach the embeddings endpoint ${endpoint.url} (${why}, ${attempts} attempts); check AFS_EMBED_BASE_URL and the network`,
    details,
  );
}

/** A success status with an answer that is not the embeddings API's. */
export function malformed(endpoint: Endpoint, what: string): AfsError {
  return new AfsError(
    "IO_ERROR",
    `the embeddings endpoint ${endpoint.url} answered with ${what}; check that AFS_EMBED_BASE_URL points at an OpenAI-compatible API`,
    { url: endpoint.url, model: endpoint.model },
  );
}

/** `{error: {message, code}}` as OpenAI sends it; other servers' bodies become the message as text. */
export function errorBody(text: string): { message?: string; code?: string } {
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } | string; message?: unknown };
    const error = json.error;
    if (typeof error === "string") return { message: error.slice(0, 300) };
    const message =
      typeof error?.message === "string" ? error.message : typeof json.message === "string" ? json.message : undefined;
    const code = typeof error?.code === "string" ? error.code : undefined;
    return { message: message?.slice(0, 300), code };
  } catch {
    const trimmed = text.trim().slice(0, 200);
    return trimmed ? { message: trimmed } : {};
  }
}

/** OpenAI's retry-after-ms, else Retry-After in seconds or as a date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const redact = (message: string, key: string | undefined): string =>
  key && key.length >= 8 ? message.split(key).join("[key]") : message;
