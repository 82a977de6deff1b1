// Blob texts kept in memory between searches as their UTF-8 bytes in latin1 strings (one unit per
// byte), keyed by content hash (so never stale) and bounded by their total length: the least
// recently used go first.
import type { Hash } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";

/**
 * Default budget in bytes of text: a warm search reads its candidates from memory, as rg reads them
 * from the page cache; a tree with more text than this reads the rest from the store on each search.
 * AFS_TEXT_CACHE_MB overrides it.
 */
const DEFAULT_TEXT_CACHE_UNITS = 256 * 1024 * 1024;

export function textCacheBudget(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.AFS_TEXT_CACHE_MB);
  return env.AFS_TEXT_CACHE_MB !== undefined && Number.isFinite(mb) && mb >= 0
    ? Math.floor(mb * 1024 * 1024)
    : DEFAULT_TEXT_CACHE_UNITS;
}

export class TextCache {
  private readonly entries: WeightedLru<Hash, string>;

  constructor(readonly budget: number = DEFAULT_TEXT_CACHE_UNITS) {
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
