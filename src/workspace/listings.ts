// Flattened listings of stored subtrees, keyed by directory path and tree hash. A stored tree never
// changes, so a subtree with no live changes below it lists the same every time: a walk reuses it
// and recomputes only the directories along changed paths. Bounded by the entries it holds.
import type { Hash } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import type { Stat } from "../volume/volume.js";

/**
 * Entries held across all listings before the least recently used are dropped. A listing holds its
 * subtrees' entries again (the same Stat objects, so only 8 bytes each), so a tree counts about
 * (depth + 1) times its files: 8M lets a warm process keep the whole listing of a 1M-file tree,
 * which is what makes its next search skip the walk (with 1M, the root's listing was never kept).
 */
const DEFAULT_CAPACITY = 8_000_000;

export class SubtreeListings {
  private readonly lists: WeightedLru<string, readonly Stat[]>;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.lists = new WeightedLru(capacity, (stats) => stats.length);
  }

  get(dir: string, tree: Hash): readonly Stat[] | undefined {
    return this.lists.get(`${tree}\u0000${dir}`);
  }

  set(dir: string, tree: Hash, stats: readonly Stat[]): void {
    this.lists.set(`${tree}\u0000${dir}`, stats);
  }
}
