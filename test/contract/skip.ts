// How a store opts out of a contract test: only with a written reason, shown in the test's name,
// so every difference between stores is visible in the suite's output (Hono's router suite shape).
import { it as vitestIt } from "vitest";

export interface Skip {
  /** Why this store may differ here. */
  reason: string;
  /** Titles of the tests it skips, exactly as written in the suite. */
  tests: string[];
}

/** An `it` that skips the listed tests, with the reason in the skipped title. */
export function skippable(skips: readonly Skip[] = []): (title: string, fn: () => Promise<void>) => void {
  const reasons = new Map(skips.flatMap((s) => s.tests.map((t) => [t, s.reason] as const)));
  return (title, fn) => {
    const reason = reasons.get(title);
    if (reason === undefined) vitestIt(title, fn);
    else vitestIt.skip(`${title} (skipped: ${reason})`, fn);
  };
}
