// Flattened listings of stored subtrees, keyed by directory path and tree hash. A stored tree never
// changes, so a subtree with no live changes below it lists the same every time: a walk reuses it
// and recomputes only the directories along changed paths. Bounded by the entries it holds.
import type { Hash } from "../core/hash.js";
import type { Stat } from "../volume/volume.js";

/** Entries held across all listings before the least recently used are dropped. */
const DEFAULT_CAPACITY = 1_000_000;

export class SubtreeListings {
  private readonly lists = new Map<string, readonly Stat[]>();
  private held = 0;

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  get(dir: string, tree: Hash): readonly Stat[] | undefined {
    const key = `${tree}\u0000${dir}`;
    const hit = this.lists.get(key);
    if (hit) {
      // Re-insert so the Map's order is a recency order (a cheap LRU).
      this.lists.delete(key);
      this.lists.set(key, hit);
    }
    return hit;
  }

  set(dir: string, tree: Hash, stats: readonly Stat[]): void {
    if (stats.length > this.capacity) return;
    const key = `${tree}\u0000${dir}`;
    const old = this.lists.get(key);
    if (old) this.held -= old.length;
    this.lists.set(key, stats);
    this.held += stats.length;
    for (const [oldest, list] of this.lists) {
      if (this.held <= this.capacity) break;
      this.lists.delete(oldest);
      this.held -= list.length;
    }
  }
}
