// The store-independent half of `Store.repack`: each store lists the values that hold blob content
// and says how to read and conditionally rewrite one; this walks them one at a time (so memory
// stays at one value) and lets blob-codec decide which need re-encoding.
import { reencoded } from "./blob-codec.js";
import { CHUNK_BYTES } from "./chunking.js";

/** What a repack changed: values rewritten, and their stored bytes before and after. */
export interface RepackResult {
  values: number;
  bytes_before: number;
  bytes_after: number;
}

/** Reported after each value a repack visits. */
export interface RepackProgress extends RepackResult {
  visited: number;
}

export type OnRepackProgress = (progress: RepackProgress) => void | Promise<void>;

/** One stored value: an inline blob or a chunk. */
export interface RepackTarget {
  /** How errors name it, e.g. `chunk <hash>`. */
  what: string;
  /** Its content's size. */
  size: number;
  /** Its stored bytes now, or null when it has gone since it was listed. */
  read(): Promise<Buffer | null>;
  /** Replaces its stored bytes only if it still exists (never resurrects one gc deleted); whether it did. */
  write(stored: Buffer): Promise<boolean>;
}

/** Re-encodes every target blob-codec would store differently today. */
export async function repackValues(
  targets: AsyncIterable<RepackTarget>,
  onProgress?: OnRepackProgress,
): Promise<RepackResult> {
  const result: RepackResult = { values: 0, bytes_before: 0, bytes_after: 0 };
  let visited = 0;
  for await (const target of targets) {
    visited++;
    const done = await repackOne(target);
    if (done) {
      result.values++;
      result.bytes_before += done.before;
      result.bytes_after += done.after;
    }
    await onProgress?.({ ...result, visited });
  }
  return result;
}

/** The stored bytes before and after, when the target was rewritten. */
async function repackOne(target: RepackTarget): Promise<{ before: number; after: number } | null> {
  // A blob stored whole before chunking existed may be far larger than a chunk: re-encoding it would
  // hold it in memory several times over, and only re-chunking it (afs migrate) fixes its layout.
  if (target.size > CHUNK_BYTES) return null;
  const stored = await target.read();
  const fresh = stored && reencoded(stored, target.size, target.what);
  if (!stored || !fresh || !(await target.write(fresh))) return null;
  return { before: stored.byteLength, after: fresh.byteLength };
}
