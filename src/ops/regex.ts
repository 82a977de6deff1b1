// Line matchers for grep. Every pattern an agent supplies runs on RE2 (re2js), whose matching time
// is linear in the input, so no pattern can hang the process; fixed strings take a plain fast path.
import { RE2JS } from "re2js";
import { AfsError } from "../core/errors.js";

export type PatternMode = "fixed" | "glob" | "regexp";

export interface MatcherOptions {
  pattern: string;
  mode: PatternMode;
  ignoreCase?: boolean;
  /** The match must be a whole word: not preceded or followed by a letter, digit or underscore. */
  word?: boolean;
  /** The match must be the whole line. */
  line?: boolean;
}

// Unicode-aware word characters, so "é" counts as part of a word.
const NOT_WORD = "[^\\p{L}\\p{N}_]";

/** A predicate on one line (without its line ending). */
export function lineMatcher(o: MatcherOptions): (line: string) => boolean {
  if (o.mode === "fixed" && !o.ignoreCase && !o.word && !o.line) {
    const needle = o.pattern;
    return (line) => line.includes(needle);
  }
  let source = o.mode === "fixed" ? escapeRegex(o.pattern) : o.mode === "glob" ? globToRegex(o.pattern) : o.pattern;
  if (o.word) source = `(?:^|${NOT_WORD})(?:${source})(?:$|${NOT_WORD})`;
  if (o.line || o.mode === "glob") source = `^(?:${source})$`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(source, o.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new AfsError(
      "INVALID_ARGUMENT",
      `invalid ${o.mode === "regexp" ? "regular expression" : "pattern"} ${JSON.stringify(o.pattern)}: ${reason} (RE2 syntax: no backreferences or lookaround)`,
      { pattern: o.pattern },
    );
  }
  return (line) => re.test(line);
}

export const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/**
 * Translates a glob into an RE2 pattern (unanchored): `*` any run of characters, `?` one character,
 * `[abc]`/`[!abc]`/`[a-z]` a class, `{a,b}` alternatives, `\x` a literal x. Lines are not paths,
 * so `*` also crosses "/".
 */
export function globToRegex(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "\\" && i + 1 < glob.length) {
      out += escapeRegex(glob[++i] as string);
    } else if (c === "*") {
      while (glob[i + 1] === "*") i++;
      out += ".*";
    } else if (c === "?") {
      out += ".";
    } else if (c === "[") {
      const end = classEnd(glob, i);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, end);
      let negate = false;
      if (body.startsWith("!") || body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      out += `[${negate ? "^" : ""}${body.replace(/[\\[\]^]/g, "\\$&")}]`;
      i = end;
    } else if (c === "{") {
      const alternatives = braceAlternatives(glob, i);
      if (!alternatives) {
        out += "\\{";
        continue;
      }
      out += `(?:${alternatives.parts.map(globToRegex).join("|")})`;
      i = alternatives.end;
    } else {
      out += escapeRegex(c);
    }
  }
  return out;
}

/** Index of the "]" closing the class opened at `start`, or -1; a "]" first in the class is literal. */
function classEnd(glob: string, start: number): number {
  let i = start + 1;
  if (glob[i] === "!" || glob[i] === "^") i++;
  if (glob[i] === "]") i++;
  for (; i < glob.length; i++) if (glob[i] === "]") return i;
  return -1;
}

/** The comma-separated parts of the brace group opened at `start` (nesting allowed), or null. */
function braceAlternatives(glob: string, start: number): { parts: string[]; end: number } | null {
  const parts: string[] = [];
  let depth = 0;
  let from = start + 1;
  for (let i = start + 1; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") i++;
    else if (c === "{") depth++;
    else if (c === "}" && depth > 0) depth--;
    else if (c === "}") {
      parts.push(glob.slice(from, i));
      return parts.length > 1 ? { parts, end: i } : null;
    } else if (c === "," && depth === 0) {
      parts.push(glob.slice(from, i));
      from = i + 1;
    }
  }
  return null;
}
