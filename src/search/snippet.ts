// The few lines of a passage shown with a search result: the line holding most of the query's words
// with one line either side, or the passage's first lines when no word is on any line.
import { passageLines } from "./passages.js";
import { tokenize } from "./words.js";

const SNIPPET_CHARS = 400;

export function snippet(text: string, startLine: number, endLine: number, words: ReadonlySet<string>): string {
  // The passage's line numbers count lines the way passages split them.
  const lines = passageLines(text).slice(startLine - 1, endLine);
  let best = -1;
  let bestHits = 0;
  for (const [i, line] of lines.entries()) {
    const hits = new Set(tokenize(line).filter((t) => words.has(t))).size;
    if (hits > bestHits) {
      best = i;
      bestHits = hits;
    }
  }
  const shown =
    best >= 0 ? lines.slice(Math.max(0, best - 1), best + 2) : lines.filter((l) => l.trim() !== "").slice(0, 3);
  const out = shown.join("\n").replace(/^\s*\n|\n\s*$/g, "");
  return out.length > SNIPPET_CHARS ? `${out.slice(0, SNIPPET_CHARS)}…` : out;
}
