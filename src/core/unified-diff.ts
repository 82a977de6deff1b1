// Unified diffs between two texts, the one format every surface shows a change in (cp diff, the
// changes an ACP session made, the diff a person approves).
import { createTwoFilesPatch } from "diff";

/**
 * A unified diff of `before` → `after` with 3 lines of context, starting at "--- a/…" like git's
 * (the library's "=====" banner line is dropped); a missing side is an empty text.
 */
export const unifiedPatch = (path: string, before: string | null, after: string | null): string =>
  createTwoFilesPatch(
    before === null ? "/dev/null" : `a${path}`,
    after === null ? "/dev/null" : `b${path}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: 3 },
  ).replace(/^=+\n/, "");
