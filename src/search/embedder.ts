// The embedding provider semantic search uses, from the AFS_EMBED_* settings (or OPENAI_API_KEY).
import { isAfsError } from "../core/errors.js";
import type { Env } from "../core/settings.js";
import type { EmbeddingProviders } from "./embeddings/open.js";
import type { Embedder } from "./query-index.js";

/**
 * The provider AFS_EMBED_* (or OPENAI_API_KEY) in `env` configures, opened by (and kept in)
 * `providers`. A misconfiguration becomes the reason semantic search is unavailable, so keyword
 * search keeps working while the message says what to fix.
 */
export async function embedderFrom(env: Env, providers: () => Promise<EmbeddingProviders>): Promise<Embedder> {
  try {
    const setup = await (await providers()).open(env);
    return setup.provider ? { provider: setup.provider } : { provider: null, message: setup.unavailable };
  } catch (e) {
    if (isAfsError(e)) return { provider: null, message: e.message };
    throw e;
  }
}
