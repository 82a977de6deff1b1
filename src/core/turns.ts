// Long computations that share one thread with other callers (the resident afs answers several
// clients at once, afs serve several requests) give the others a turn now and then: after a slice
// of uninterrupted work, wait one turn of the event loop. A few microseconds every few milliseconds.

/** How long a computation runs before it lets others have a turn. */
const SLICE_MS = 10;

/** Returns a function to call between steps of one computation; it waits only when a slice is used up. */
export function turns(sliceMs = SLICE_MS): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
