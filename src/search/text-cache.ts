// Blob texts kept in memory between searches as their UTF-8 bytes in latin1 strings (one unit per
// byte), keyed by content hash (so never stale) and bounded by their total length: the least
// recently used go first.
import type { Hash } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import { DEFAULT_TEXT_CACHE_BYTES } from "../core/settings.js";

export class TextCache {
  private readonly entries: WeightedLru<Hash, string>;

  /** `budget`: units (bytes) of text; an engine passes its textCacheBytes setting (AFS_TEXT_CACHE_MB). */
  constructor(readonly budget: number = DEFAULT_TEXT_CACHE_BYTES) {
    this.entries = new WeightedLru(budget, (text) => text.length);
  }

  get(hash: Hash): string | undefined {
    return this.entries.get(hash);
  }

  set(hash: Hash, text: string): void {
    // One text may take at most a quarter of the budget, so a huge file cannot flush the rest.
    if (text.length <= this.budget / 4) this.entries.set(hash, text);
  }

  get size(): number {
    return this.entries.size;
  }
}
