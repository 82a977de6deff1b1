// Per-key locks within one process: mutations of the same host locations run one at a time, in
// arrival order, while different locations proceed in parallel.

export class KeyedLock {
  // The tail of each key's queue; removed when its last holder releases, so the map stays small.
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `fn` holding every key (taken in sorted order, so two callers cannot deadlock). */
  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
      return await fn();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  /** How many keys are held or waited for (for tests: it returns to 0 when all are released). */
  get size(): number {
    return this.tails.size;
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release = (): void => {};
    const mine = new Promise<void>((done) => {
      release = done;
    });
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
