// Bounds for moving many files between disk and the store: a budget of bytes held in memory, a
// pool of bounded parallelism, and failures that name the file they happened to.
import { AfsError, toAfsError } from "../core/errors.js";

/** Runs `fn` over items with bounded parallelism. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  });
  await Promise.all(workers);
}

/** A budget of bytes in memory: take before reading, give back once stored or written. */
export class ByteBudget {
  private free: number;
  private readonly waiting: { n: number; go: () => void }[] = [];

  constructor(private readonly limit: number) {
    this.free = limit;
  }

  /** Takes up to the whole budget (a bigger request waits for all of it). */
  async take(bytes: number): Promise<number> {
    const n = Math.min(bytes, this.limit);
    if (this.waiting.length === 0 && n <= this.free) {
      this.free -= n;
      return n;
    }
    await new Promise<void>((go) => this.waiting.push({ n, go }));
    return n;
  }

  /** Takes `bytes` now if they are free and nobody waits (no promise: the hot path of an import). */
  tryTake(bytes: number): boolean {
    const n = Math.min(bytes, this.limit);
    if (this.waiting.length > 0 || n > this.free) return false;
    this.free -= n;
    return true;
  }

  give(n: number): void {
    this.free += n;
    for (let w = this.waiting[0]; w && w.n <= this.free; w = this.waiting[0]) {
      this.waiting.shift();
      this.free -= w.n;
      w.go();
    }
  }
}

/** A failure with one file, as an AfsError that names the file and keeps its code. */
export function fileError(rel: string, e: unknown): AfsError {
  const err = toAfsError(e);
  if (err.details.file !== undefined) return err;
  return new AfsError(err.code, `/${rel}: ${err.message}`, { ...err.details, file: `/${rel}` });
}

/** Runs `fn` for one file, so a failure names the file and keeps its code. */
export async function forFile<T>(rel: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw fileError(rel, e);
  }
}
