// grep -c and -l of a plain literal: the content index counts matching lines straight from the
// texts' bytes (TextIndex.countLines), for a window of the sorted targets at a time, so the store
// reads their blobs in batches while a search with a small limit still stops early.
import type { Hash } from "../core/hash.js";
import { countable } from "../search/count-lines.js";
import type { TextIndex } from "../search/text-index.js";

/**
 * Targets counted per call: the first few, then twice as many each time up to the most, so a search
 * with a small limit reads little and a long one hands the store large batches.
 */
const FIRST_WINDOW = 512;
const MAX_WINDOW = 16_384;

export class WindowedCounts {
  private counts = new Map<Hash, number>();
  private end = 0;
  private window = FIRST_WINDOW;

  private constructor(
    private readonly count: NonNullable<TextIndex["countLines"]>,
    private readonly literal: string,
    private readonly max: number,
  ) {}

  /** A counter when the index can count `literal` (a fixed string grep's byte path finds whole), else null. */
  static of(index: TextIndex | undefined, literal: string | null, max: number): WindowedCounts | null {
    if (!index?.countLines || literal === null || !countable(literal)) return null;
    return new WindowedCounts(index.countLines.bind(index), literal, max);
  }

  /**
   * The count of `hashes[at]` (the content hash of the target at `at` in the sorted targets;
   * undefined where none is known), or undefined when the index did not count it.
   */
  async at(hashes: (i: number) => Hash | undefined, length: number, at: number): Promise<number | undefined> {
    const hash = hashes(at);
    if (hash === undefined) return undefined;
    if (at >= this.end) {
      const window: Hash[] = [];
      for (let i = at; i < Math.min(length, at + this.window); i++) {
        const h = hashes(i);
        if (h !== undefined) window.push(h);
      }
      this.end = at + this.window;
      this.window = Math.min(MAX_WINDOW, 2 * this.window);
      this.counts = await this.count(window, this.literal, this.max);
    }
    return this.counts.get(hash);
  }
}
