// The other half of optimistic concurrency: after a lost race (CONFLICT) the engine recomputes and
// tries again after a short jittered pause, so a try can fall between other writers' commits (on a
// store where each try costs several round trips, retrying at once keeps losing). A change gives up
// with TIMEOUT only after a time budget, however many writers it competes with.

/** A change losing every race gives up after this long… */
const RETRY_BUDGET_MS = 10_000;
/** …or this many tries, whichever comes first. */
const MAX_ATTEMPTS = 1_000;
/** Pauses start at about FIRST_PAUSE_MS and double up to MAX_PAUSE_MS, with full jitter. */
const FIRST_PAUSE_MS = 1;
const MAX_PAUSE_MS = 50;

/** Waits before try `attempt + 1` of a change begun at `started`; false when it should give up. */
export async function retryAfter(attempt: number, started: number): Promise<boolean> {
  if (attempt + 1 >= MAX_ATTEMPTS || Date.now() - started >= RETRY_BUDGET_MS) return false;
  const cap = Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** attempt);
  await new Promise((resolve) => setTimeout(resolve, Math.random() * cap));
  return true;
}
