// What the query index stores for each chunk of a blob: its place, the hash of the text an
// embedding model sees (the key of its vectors), and its words for the keyword index.
import { sha256 } from "../core/hash.js";
import { type ChunkStrategy, chunkDocument, chunkFile } from "./chunks.js";
import type { ChunkedBlob, ChunkRecord } from "./stores.js";
import { tokenize } from "./tokens.js";

/** An embedding model sees at most this much of a chunk. */
const MAX_EMBED_CHARS = 8 * 1024;

/** The text a chunk is embedded as, and the key of its vector. */
export function embedText(chunk: { text: string; context: string }): string {
  const doc = chunkDocument(chunk);
  return doc.length > MAX_EMBED_CHARS ? doc.slice(0, MAX_EMBED_CHARS) : doc;
}

/** Chunks of one blob as the index stores them: positions, vector key and keyword terms. */
export function chunkRecords(data: Uint8Array, name: string, strategy: ChunkStrategy): Omit<ChunkedBlob, "blob"> {
  const file = chunkFile(data, name, strategy);
  const chunks: ChunkRecord[] = file.chunks.map((c) => ({
    seq: c.seq,
    start_line: c.start_line,
    end_line: c.end_line,
    hash: sha256(embedText(c)),
    terms: tokenize(chunkDocument(c)).join(" "),
  }));
  return { name, chunks, ...(file.skipped ? { skipped: file.skipped } : {}) };
}
