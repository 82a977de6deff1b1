// The embedding provider semantic search uses, from the AFS_EMBED_* settings (or OPENAI_API_KEY).
import { isAfsError } from "../core/errors.js";
import type { Embedder } from "./query-index.js";

/**
 * The provider AFS_EMBED_* (or OPENAI_API_KEY) configures. A misconfiguration becomes the reason
 * semantic search is unavailable, so keyword search keeps working while the message says what to fix.
 */
export async function embedderFromEnv(): Promise<Embedder> {
  try {
    // Imported here, not at the top: every afs process loads this module, few embed anything.
    const setup = await (await import("./embeddings/open.js")).openEmbeddingProvider();
    return setup.provider ? { provider: setup.provider } : { provider: null, message: setup.unavailable };
  } catch (e) {
    if (isAfsError(e)) return { provider: null, message: e.message };
    throw e;
  }
}
