// Blob texts kept in memory between searches as their UTF-8 bytes in latin1 strings (one unit per
// byte), keyed by content hash (so never stale) and bounded by their total length: the least
// recently used go first, but never for a text of the same pass (see nextPass).
import type { Hash } from "../core/hash.js";
import { DEFAULT_TEXT_CACHE_BYTES } from "../core/settings.js";

interface Entry {
  text: string;
  /** The pass that last used it. */
  pass: number;
}

export class TextCache {
  // A Map iterates in insertion order; re-inserting on use makes the first key the least recent.
  private readonly entries = new Map<Hash, Entry>();
  private held = 0;
  private pass = 0;
  /** The last pass that found the cache full of its own texts. */
  private full = -1;
  /**
   * Where eviction last looked. Every entry before it is deleted or was re-inserted later, so the
   * least recent live entry is the next one it yields; starting over from the Map's first slot would
   * step over every deleted slot the Map has not compacted yet, on each eviction (seconds, at 100k texts).
   */
  private oldest: Iterator<[Hash, Entry]> | null = null;

  /** `budget`: units (bytes) of text; an engine passes its textCacheBytes setting (AFS_TEXT_CACHE_MB). */
  constructor(readonly budget: number = DEFAULT_TEXT_CACHE_BYTES) {}

  /**
   * Starts a pass (a search). A text used in this pass is not evicted for another of it: a search
   * whose texts outweigh the budget keeps the ones it cached first and reads the rest from the store,
   * rather than evicting each text before the next search asks for it again (pure LRU over a cyclic
   * scan larger than the cache misses every time: a warm `grep -c` of a common word over 200k files
   * read every text from the store, slower than a new process).
   */
  nextPass(): void {
    this.pass++;
  }

  get(hash: Hash): string | undefined {
    const entry = this.entries.get(hash);
    if (entry === undefined) return undefined;
    entry.pass = this.pass;
    this.entries.delete(hash);
    this.entries.set(hash, entry);
    return entry.text;
  }

  /** Whether `set` would keep a text of this length now, so a caller can skip making one it would drop. */
  wants(length: number): boolean {
    return length <= this.budget / 4 && !(this.full === this.pass && this.held + length > this.budget);
  }

  set(hash: Hash, text: string): void {
    // One text may take at most a quarter of the budget, so a huge file cannot flush the rest.
    if (text.length > this.budget / 4) return;
    const old = this.entries.get(hash);
    if (old !== undefined) {
      this.entries.delete(hash);
      this.held -= old.text.length;
    }
    // Full of this pass's texts (entries only ever get more recent, so it stays so until the next pass).
    if (this.full === this.pass && this.held + text.length > this.budget) return;
    while (this.held + text.length > this.budget) {
      const oldest = this.leastRecent();
      if (oldest === null) return;
      const [key, entry] = oldest;
      if (entry.pass === this.pass) {
        // The least recent was used in this pass, so every other one was too: this text is not held.
        this.full = this.pass;
        // The iterator has stepped past that entry, which stays: the next eviction starts over.
        this.oldest = null;
        return;
      }
      this.entries.delete(key);
      this.held -= entry.text.length;
    }
    this.entries.set(hash, { text, pass: this.pass });
    this.held += text.length;
  }

  /** The least recently used entry (the caller evicts it or drops the iterator), or null when there is none. */
  private leastRecent(): [Hash, Entry] | null {
    this.oldest ??= this.entries.entries();
    let step = this.oldest.next();
    // A spent Map iterator stays spent, even when entries were added after it.
    if (step.done) {
      this.oldest = this.entries.entries();
      step = this.oldest.next();
    }
    return step.done ? null : step.value;
  }

  get size(): number {
    return this.entries.size;
  }
}
