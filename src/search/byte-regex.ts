// RE2 patterns (and case-insensitive fixed strings) translated into JavaScript RegExps that run on
// the bytes of UTF-8 text seen as a latin1 string, one unit per byte, so a search needs no decode.
// A translation never matches across a line end; it is exact (a hit means the line matches) or null.
import { setFlagsFromString } from "node:v8";

// Irregexp backtracks, so an agent's pattern could take exponential time; with this flag V8 reruns
// any exec that backtracks too much on its linear-time engine instead. Every source built here is
// within that engine's subset (no backreferences, no lookaround), so every exec is bounded.
setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
setFlagsFromString("--regexp-backtracks-before-fallback=1000000");

/** One whole non-ASCII UTF-8 sequence (the text is valid UTF-8: the index decoded it). */
const MULTI = "[\\xc0-\\xdf][\\x80-\\xbf]|[\\xe0-\\xef][\\x80-\\xbf]{2}|[\\xf0-\\xf7][\\x80-\\xbf]{3}";
/** One character other than those of an ASCII class body, and never LF (lines do not hold one). */
const notIn = (body: string): string => `(?:[^${body}\\n\\x80-\\xff]|${MULTI})`;

// ASCII class bodies; \s leaves out LF, which no line holds, and \v, which RE2's \s does not hold.
const PERL: Record<string, string> = { d: "0-9", w: "0-9A-Za-z_", s: "\\t\\f\\r " };
const SIMPLE: Record<string, number> = { t: 9, n: 10, r: 13, f: 12, v: 11, a: 7 };

class Unsupported extends Error {}

const hex2 = (b: number): string => `\\x${b.toString(16).padStart(2, "0")}`;
const asciiLiteral = (c: string): string => (/[A-Za-z0-9_ ]/.test(c) ? c : hex2(c.charCodeAt(0)));

/** A literal code point as a byte sequence. */
function literal(cp: number): string {
  if (cp === 10) throw new Unsupported(); // a line never holds LF
  if (cp < 128) return asciiLiteral(String.fromCharCode(cp));
  const bytes = Buffer.from(String.fromCodePoint(cp), "utf8");
  return `(?:${[...bytes].map(hex2).join("")})`;
}

/**
 * A fixed string matched without regard to case, as RE2 folds it: ASCII letters, plus k with the
 * Kelvin sign and s with the long s. Null when a non-ASCII character has case (RE2's folding of
 * those is not reproduced here).
 */
export function caselessSource(pattern: string): string | null {
  let out = "";
  for (const ch of pattern) {
    const lower = ch === "\u212a" ? "k" : ch === "\u017f" ? "s" : ch.toLowerCase();
    if (/^[a-z]$/.test(lower)) {
      const upper = lower.toUpperCase();
      if (lower === "k") out += "(?:[kK]|\\xe2\\x84\\xaa)";
      else if (lower === "s") out += "(?:[sS]|\\xc5\\xbf)";
      else out += `[${lower}${upper}]`;
      continue;
    }
    if (ch.toLowerCase() !== ch || ch.toUpperCase() !== ch || /[\p{Lu}\p{Ll}\p{Lt}\p{M}]/u.test(ch)) return null;
    try {
      out += literal(ch.codePointAt(0) as number);
    } catch {
      return null;
    }
  }
  return out;
}

/**
 * A case-sensitive RE2 pattern over bytes, or null when it uses anything not translated exactly
 * (flags, anchors, Unicode classes, \Q…\E, non-ASCII in a class, …): callers then use RE2 itself.
 */
export function byteSource(pattern: string): string | null {
  try {
    const t = new Translator(pattern);
    const out = t.alternation();
    if (t.i !== pattern.length) return null;
    return out;
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
}

class Translator {
  i = 0;
  private depth = 0;

  constructor(private readonly s: string) {}

  alternation(): string {
    const parts = [this.concat()];
    while (this.s[this.i] === "|") {
      this.i++;
      parts.push(this.concat());
    }
    return parts.join("|");
  }

  private concat(): string {
    let out = "";
    while (this.i < this.s.length && this.s[this.i] !== "|" && this.s[this.i] !== ")") {
      const atom = this.atom();
      out += this.repeat(atom);
    }
    return out;
  }

  private repeat(atom: string): string {
    let out = atom;
    for (;;) {
      const c = this.s[this.i];
      let q: string | null = null;
      if (c === "*" || c === "+" || c === "?") {
        q = c;
        this.i++;
      } else if (c === "{") {
        const m = /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(this.s.slice(this.i));
        if (!m) throw new Unsupported(); // RE2 reads some braces as literals; not worth copying
        if (m[3] !== undefined && Number(m[3]) < Number(m[1])) throw new Unsupported();
        if (Number(m[1]) > 1000 || Number(m[3] ?? 0) > 1000) throw new Unsupported();
        q = m[0];
        this.i += m[0].length;
      } else {
        return out;
      }
      // Laziness does not change whether a line matches, only which match is found.
      if (this.s[this.i] === "?") this.i++;
      // RE2 refuses a repeated repetition (a**); leave that error to RE2.
      if (/[*+?}]$/.test(out) && !out.endsWith(")")) throw new Unsupported();
      out = `(?:${out})${q}`;
    }
  }

  private atom(): string {
    const c = this.s[this.i] as string;
    this.i++;
    switch (c) {
      case "(": {
        if (this.s[this.i] === "?") {
          if (this.s[this.i + 1] !== ":") throw new Unsupported(); // flags, named groups
          this.i += 2;
        }
        if (++this.depth > 100) throw new Unsupported();
        const inner = this.alternation();
        if (this.s[this.i] !== ")") throw new Unsupported();
        this.i++;
        this.depth--;
        return `(?:${inner})`;
      }
      case ".":
        return notIn("");
      case "[":
        return this.charClass();
      case "\\":
        return this.escape();
      case "^":
      case "$":
      case ")":
      case "*":
      case "+":
      case "?":
      case "{":
        throw new Unsupported();
      default: {
        const cp = this.s.codePointAt(this.i - 1) as number;
        if (cp > 0xffff) this.i++;
        return literal(cp);
      }
    }
  }

  private escape(): string {
    const c = this.s[this.i];
    if (c === undefined) throw new Unsupported();
    this.i++;
    if (c === "b" || c === "B") return `\\${c}`;
    const perl = PERL[c];
    if (perl !== undefined) return `[${perl}]`;
    const negated = PERL[c.toLowerCase()];
    if (negated !== undefined) return notIn(negated);
    const simple = SIMPLE[c];
    if (simple !== undefined) return literal(simple);
    if (/[!-/:-@[-`{-~]/.test(c)) return asciiLiteral(c);
    throw new Unsupported();
  }

  /** An ASCII-only class: [abc], [^a-z], with \d \w \s inside. */
  private charClass(): string {
    let negate = false;
    if (this.s[this.i] === "^") {
      negate = true;
      this.i++;
    }
    let body = "";
    let first = true;
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) throw new Unsupported();
      if (c === "]" && !first) break;
      first = false;
      if (c === "[") throw new Unsupported(); // [:alpha:] and friends
      const lo = this.classChar();
      if (lo.perl) {
        body += lo.perl;
        continue;
      }
      if (this.s[this.i] === "-" && this.s[this.i + 1] !== "]" && this.s[this.i + 1] !== undefined) {
        this.i++;
        const hi = this.classChar();
        if (hi.perl || hi.code < lo.code) throw new Unsupported();
        if (!negate && lo.code <= 10 && hi.code >= 10) throw new Unsupported();
        body += `${hex2(lo.code)}-${hex2(hi.code)}`;
      } else {
        // A class that held LF could match across a line end; within a line LF never occurs.
        if (lo.code !== 10 || negate) body += hex2(lo.code);
      }
    }
    this.i++;
    if (negate) return notIn(body);
    if (body === "") throw new Unsupported(); // [\n]: matches nothing within a line
    return `[${body}]`;
  }

  private classChar(): { code: number; perl: string | null } {
    const c = this.s[this.i] as string;
    this.i++;
    if (c !== "\\") {
      const code = c.charCodeAt(0);
      if (code >= 128) throw new Unsupported();
      return { code, perl: null };
    }
    const e = this.s[this.i];
    if (e === undefined) throw new Unsupported();
    this.i++;
    const perl = PERL[e];
    if (perl !== undefined) return { code: 0, perl };
    const simple = SIMPLE[e];
    if (simple !== undefined) return { code: simple, perl: null };
    if (/[!-/:-@[-`{-~]/.test(e)) return { code: e.charCodeAt(0), perl: null };
    throw new Unsupported();
  }
}
