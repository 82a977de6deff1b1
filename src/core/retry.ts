// The one conflict-retry policy. Concurrency is optimistic (a revision compare-and-swap in the
// store, an expected sha256 in a volume), so a writer that lost a race recomputes and tries again.
// Every writer and every consistent read retries here: after a jittered, growing pause, so a try
// can fall between other writers' commits (retrying at once keeps losing on a store where a try
// costs several round trips, and spins the CPU), and only within a time budget, so it never starves
// silently: it gives up with an error saying what to do.
import { AfsError, isAfsError } from "./errors.js";

/** The policy, stated once. */
export const RETRY_POLICY = {
  /** A change losing every race gives up after trying for this long… */
  budgetMs: 10_000,
  /** …and pauses between tries start below firstPauseMs, doubling up to maxPauseMs (full jitter). */
  firstPauseMs: 1,
  maxPauseMs: 50,
} as const;

/** What a try returns when it lost a race (a CONFLICT, a snapshot that moved on): try again. */
export const RETRY: unique symbol = Symbol("retry");
export type Try<T> = T | typeof RETRY;

export interface RetryOptions {
  /** The error to give up with, told how many tries were made over how long. */
  giveUp: (spent: { tries: number; ms: number }) => AfsError;
  /** Overrides RETRY_POLICY.budgetMs (tests). */
  budgetMs?: number;
}

/** The longest pause before try `attempt + 1` (the pause itself is uniform below it). */
export const pauseCap = (attempt: number): number =>
  Math.min(RETRY_POLICY.maxPauseMs, RETRY_POLICY.firstPauseMs * 2 ** attempt);

/**
 * Runs `attempt(0)`, `attempt(1)`, … until one returns something other than RETRY, pausing
 * between tries; throws `giveUp` once the budget is spent. Errors an attempt throws end it.
 */
export async function retryOnConflict<T>(attempt: (n: number) => Promise<Try<T>>, options: RetryOptions): Promise<T> {
  const started = Date.now();
  const budget = options.budgetMs ?? RETRY_POLICY.budgetMs;
  for (let n = 0; ; n++) {
    const value = await attempt(n);
    if (value !== RETRY) return value;
    const ms = Date.now() - started;
    if (ms >= budget) throw options.giveUp({ tries: n + 1, ms });
    await new Promise((resolve) => setTimeout(resolve, Math.random() * pauseCap(n)));
  }
}

/** `p`'s value, or RETRY when it fails with CONFLICT (the store's lost compare-and-swap). */
export function retryIfConflict<T>(p: Promise<T>): Promise<Try<T>> {
  return p.catch((e: unknown) => {
    if (isConflict(e)) return RETRY;
    throw e;
  });
}

const isConflict = (e: unknown): boolean => isAfsError(e) && e.code === "CONFLICT";

/** How the give-up messages say what was spent: "12 tries in 10.0 s". */
export const spentText = ({ tries, ms }: { tries: number; ms: number }): string =>
  `${tries} tries in ${(ms / 1000).toFixed(1)} s`;

/** A writer's give-up: TIMEOUT, its change lost every race to other writers of the workspace. */
export const tooBusy =
  (workspace: string) =>
  (spent: { tries: number; ms: number }): AfsError =>
    new AfsError(
      "TIMEOUT",
      `workspace ${workspace} is too busy (too many concurrent writers; gave up after ${spentText(spent)}); retry shortly`,
      { workspace, tries: spent.tries },
    );

/** A consistent read's give-up: TIMEOUT, naming the workspace and what was being done. */
export const keptChanging =
  (workspace: string, doing: string) =>
  (spent: { tries: number; ms: number }): AfsError =>
    new AfsError("TIMEOUT", `workspace ${workspace} kept changing ${doing} (${spentText(spent)}); retry`, {
      workspace,
      tries: spent.tries,
    });
