// Path globs as glob and grep read them: a pattern with a "/" matches the path relative to the
// search directory ("src/**/*.ts"); one without matches a name ("*.go"). Hidden names match too.
import picomatch from "picomatch";
import { AfsError } from "../core/errors.js";

export interface PathGlob {
  /** True for a pattern with a "/", matched against the whole relative path. */
  byPath: boolean;
  isMatch: (s: string) => boolean;
}

export function pathGlob(pattern: string, what = "glob pattern"): PathGlob {
  const byPath = pattern.includes("/");
  // "/src/*.ts" and "./src/*.ts" both mean relative to the search directory.
  const source = byPath ? pattern.replace(/^(?:\.?\/)+/, "") : pattern;
  try {
    return { byPath, isMatch: picomatch(source, { dot: true }) };
  } catch (e) {
    throw new AfsError("INVALID_ARGUMENT", `invalid ${what} ${JSON.stringify(pattern)}: ${String(e)}`);
  }
}

/**
 * A filter on paths relative to the search directory (no leading "/"): kept when some include
 * matches (or none is given) and no exclude does. A name-only exclude ("node_modules") matches any
 * directory on the way as well as the file's own name.
 */
export function pathFilter(include: readonly string[], exclude: readonly string[]): ((rel: string) => boolean) | null {
  if (include.length === 0 && exclude.length === 0) return null;
  const inc = include.map((p) => pathGlob(p, "include glob"));
  const exc = exclude.map((p) => pathGlob(p, "exclude glob"));
  return (rel) => {
    const parts = rel.split("/");
    const name = parts[parts.length - 1] as string;
    if (inc.length > 0 && !inc.some((g) => g.isMatch(g.byPath ? rel : name))) return false;
    return !exc.some((g) => (g.byPath ? g.isMatch(rel) : parts.some((part) => g.isMatch(part))));
  };
}
