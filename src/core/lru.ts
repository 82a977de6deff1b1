// A map bounded by the total weight of what it holds: adding past the budget drops the least
// recently used entries first. The caches of trees, decoded texts and subtree listings share it.

export class WeightedLru<K, V> {
  // A Map iterates in insertion order; re-inserting on use makes the first key the least recent.
  private readonly entries = new Map<K, V>();
  private held = 0;

  constructor(
    readonly budget: number,
    private readonly weight: (value: V) => number,
  ) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Holds `value` as the most recent entry; one heavier than the whole budget is not held. */
  set(key: K, value: V): void {
    const weight = this.weight(value);
    if (weight > this.budget) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.entries.delete(key);
      this.held -= this.weight(old);
    }
    this.entries.set(key, value);
    this.held += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.budget) break;
      this.entries.delete(oldest);
      this.held -= this.weight(entry);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
