// What the query index stores for each passage of a blob: its place, the hash of the text an
// embedding model sees (the key of its vectors), and its words for the keyword index.
import { sha256 } from "../core/hash.js";
import { filePassages, type PassageStrategy, passageDocument } from "./passages.js";
import type { BlobPassages, PassageRecord } from "./stores.js";
import { tokenize } from "./words.js";

/** An embedding model sees at most this much of a passage. */
const MAX_EMBED_CHARS = 8 * 1024;

/** The text a passage is embedded as, and the key of its vector. */
export function embedText(passage: { text: string; context: string }): string {
  const doc = passageDocument(passage);
  return doc.length > MAX_EMBED_CHARS ? doc.slice(0, MAX_EMBED_CHARS) : doc;
}

/** Passages of one blob as the index stores them: positions, vector key and keyword terms. */
export function passageRecords(data: Uint8Array, name: string, strategy: PassageStrategy): Omit<BlobPassages, "blob"> {
  const file = filePassages(data, name, strategy);
  const passages: PassageRecord[] = file.passages.map((c) => ({
    seq: c.seq,
    start_line: c.start_line,
    end_line: c.end_line,
    hash: sha256(embedText(c)),
    terms: tokenize(passageDocument(c)).join(" "),
  }));
  return { name, passages, ...(file.skipped ? { skipped: file.skipped } : {}) };
}
