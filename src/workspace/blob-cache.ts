// Recently read small contents, by content hash (so never stale): a file read again is not fetched
// from the store and inflated again. Bounded by bytes held; large contents are never kept.
import type { Hash } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";

const DEFAULT_BUDGET = 16 * 1024 * 1024;
/** Contents larger than this are read from the store each time: the cache is for the many small files agents reread. */
const MAX_ENTRY = 256 * 1024;

export class BlobCache {
  private readonly entries: WeightedLru<Hash, Buffer>;

  constructor(budget = DEFAULT_BUDGET) {
    this.entries = new WeightedLru(budget, (b) => b.byteLength);
  }

  /** A copy of the cached bytes (callers own what they get), or undefined. */
  get(hash: Hash): Buffer | undefined {
    const held = this.entries.get(hash);
    return held === undefined ? undefined : Buffer.from(held);
  }

  set(hash: Hash, data: Buffer): void {
    if (data.byteLength <= MAX_ENTRY) this.entries.set(hash, Buffer.from(data));
  }
}
