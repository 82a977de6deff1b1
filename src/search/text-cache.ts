// Decoded blob texts kept in memory between searches, keyed by content hash (so never stale) and
// bounded by their total length: the least recently used go first.
import type { Hash } from "../core/hash.js";

/** Default budget in UTF-16 units (about 64 MiB of ASCII text). AFS_TEXT_CACHE_MB overrides it. */
const DEFAULT_TEXT_CACHE_UNITS = 64 * 1024 * 1024;

export function textCacheBudget(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.AFS_TEXT_CACHE_MB);
  return env.AFS_TEXT_CACHE_MB !== undefined && Number.isFinite(mb) && mb >= 0
    ? Math.floor(mb * 1024 * 1024)
    : DEFAULT_TEXT_CACHE_UNITS;
}

export class TextCache {
  // A Map iterates in insertion order; re-inserting on use makes the first key the least recent.
  private readonly entries = new Map<Hash, string>();
  private used = 0;

  constructor(readonly budget: number = DEFAULT_TEXT_CACHE_UNITS) {}

  get(hash: Hash): string | undefined {
    const text = this.entries.get(hash);
    if (text !== undefined) {
      this.entries.delete(hash);
      this.entries.set(hash, text);
    }
    return text;
  }

  set(hash: Hash, text: string): void {
    // One text may take at most a quarter of the budget, so a huge file cannot flush the rest.
    if (text.length > this.budget / 4 || this.entries.has(hash)) return;
    this.entries.set(hash, text);
    this.used += text.length;
    for (const [key, old] of this.entries) {
      if (this.used <= this.budget) break;
      this.entries.delete(key);
      this.used -= old.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
