// RE2 syntax, parsed into a small tree of what each part can match: enough for required-literal
// analysis (required-literals.ts). Anything not recognised exactly throws GiveUp, never a guess.
import { foldText } from "./trigrams.js";

/**
 * A literal string as three views: `key` (folded, for the index), `src` (a JavaScript RegExp source
 * matching every spelling RE2 would accept, for scanning) and `plain` (the exact text when the
 * literal is case-sensitive throughout, for indexOf; null otherwise).
 */
export interface Lit {
  key: string;
  src: string;
  plain: string | null;
}

/** Most alternatives an exact set may hold before it is summarised as a query. */
export const MAX_EXACT = 16;

/** Thrown for any syntax this parser does not read exactly; callers then require nothing. */
export class GiveUp extends Error {}

/** What a part of the pattern can match. */
export type Node =
  | { t: "chars"; lits: Lit[] | null } // one character: one of these spellings, or null for unknown
  | { t: "empty"; anchor: boolean }
  | { t: "cat"; subs: Node[] }
  | { t: "alt"; subs: Node[] }
  | { t: "rep"; sub: Node; min: number; max: number };

const ANY: Node = { t: "chars", lits: null };
const isAsciiLetter = (c: string): boolean => /^[A-Za-z]$/.test(c);
const jsEscape = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
const CASED = /[\p{Lu}\p{Ll}\p{Lt}\p{M}]/u;
/** \a \f \t \n \r \v as code points. */
const SIMPLE_ESCAPES: Record<string, number> = { a: 7, f: 12, t: 9, n: 10, r: 13, v: 11 };

/** One code point as a literal, or null when case folding would make it unsafe to index. */
function charLit(cp: number, fold: boolean): Lit | null {
  const ch = String.fromCodePoint(cp);
  if (!fold) return { key: foldText(ch), src: jsEscape(ch), plain: ch };
  const lower = cp === 0x212a ? "k" : cp === 0x17f ? "s" : ch.toLowerCase();
  if (lower.length === 1 && lower.charCodeAt(0) < 128) {
    if (!isAsciiLetter(lower)) return { key: lower, src: jsEscape(lower), plain: lower };
    const extra = lower === "k" ? "\u212a" : lower === "s" ? "\u017f" : "";
    return { key: lower, src: `[${lower}${lower.toUpperCase()}${extra}]`, plain: null };
  }
  // Outside ASCII only characters without case are safe: RE2 and the index fold the rest differently.
  if (ch.toLowerCase() !== ch || ch.toUpperCase() !== ch || CASED.test(ch)) return null;
  return { key: foldText(ch), src: jsEscape(ch), plain: ch };
}

interface Flags {
  fold: boolean;
}

export class Parser {
  private i = 0;
  anchored = false;

  constructor(private readonly s: string) {}

  parse(fold: boolean): Node {
    const node = this.alt({ fold });
    if (this.i < this.s.length) throw new GiveUp();
    return node;
  }

  private peek(k = 0): string | undefined {
    return this.s[this.i + k];
  }

  /** The code point at the cursor, consumed. */
  private next(): number {
    const cp = this.s.codePointAt(this.i);
    if (cp === undefined) throw new GiveUp();
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private alt(flags: Flags): Node {
    const subs = [this.cat(flags)];
    while (this.peek() === "|") {
      this.i++;
      subs.push(this.cat(flags));
    }
    return subs.length === 1 ? (subs[0] as Node) : { t: "alt", subs };
  }

  private cat(flags: Flags): Node {
    const subs: Node[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "|" || c === ")") break;
      let atom = this.atom(flags);
      for (;;) {
        const rep = this.repeat();
        if (!rep) break;
        atom = { t: "rep", sub: atom, min: rep.min, max: rep.max };
      }
      subs.push(atom);
    }
    return subs.length === 1 ? (subs[0] as Node) : { t: "cat", subs };
  }

  /** A repetition operator at the cursor (with its optional lazy "?"), consumed; else null. */
  private repeat(): { min: number; max: number } | null {
    const c = this.peek();
    let rep: { min: number; max: number } | null = null;
    if (c === "*") rep = { min: 0, max: -1 };
    else if (c === "+") rep = { min: 1, max: -1 };
    else if (c === "?") rep = { min: 0, max: 1 };
    if (rep) this.i++;
    else if (c === "{") {
      // RE2 reads {n}, {n,} and {n,m}; any other "{" is a literal character.
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.s.slice(this.i));
      if (!m) return null;
      const min = Number(m[1]);
      rep = { min, max: m[2] === undefined ? min : m[3] === "" ? -1 : Number(m[3]) };
      this.i += m[0].length;
    } else return null;
    if (this.peek() === "?") this.i++;
    return rep;
  }

  private atom(flags: Flags): Node {
    const c = this.peek() as string;
    if (c === "(") return this.group(flags);
    if (c === "[") return this.charClass(flags);
    if (c === ".") {
      this.i++;
      return ANY;
    }
    if (c === "^" || c === "$") {
      this.i++;
      this.anchored = true;
      return { t: "empty", anchor: true };
    }
    if (c === "\\") return this.escape(flags);
    return this.literal(this.next(), flags);
  }

  private literal(cp: number, flags: Flags): Node {
    const lit = charLit(cp, flags.fold);
    return { t: "chars", lits: lit ? [lit] : null };
  }

  private group(outer: Flags): Node {
    this.i++; // (
    let flags = outer;
    if (this.peek() === "?") {
      const named = /^\?P?<[A-Za-z0-9_]+>/.exec(this.s.slice(this.i));
      if (named) {
        this.i += named[0].length;
        flags = { ...outer };
      } else {
        const m = /^\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(this.s.slice(this.i));
        if (!m) throw new GiveUp();
        this.i += m[0].length;
        const on = m[1] ?? "";
        const off = m[2] ?? "";
        if (m[3] === ")") {
          // (?flags) changes the rest of the enclosing group, across its alternatives.
          if (on.includes("i")) outer.fold = true;
          if (off.includes("i")) outer.fold = false;
          return { t: "empty", anchor: false };
        }
        flags = { fold: on.includes("i") ? true : off.includes("i") ? false : outer.fold };
      }
    } else flags = { ...outer };
    const node = this.alt(flags);
    if (this.peek() !== ")") throw new GiveUp();
    this.i++;
    return node;
  }

  private escape(flags: Flags): Node {
    const c = this.peek(1);
    if (c === "b" || c === "B" || c === "A" || c === "z") {
      this.i += 2;
      const anchor = c === "A" || c === "z";
      if (anchor) this.anchored = true;
      return { t: "empty", anchor };
    }
    if (c === "Q") {
      this.i += 2;
      const end = this.s.indexOf("\\E", this.i);
      const text = this.s.slice(this.i, end === -1 ? undefined : end);
      this.i = end === -1 ? this.s.length : end + 2;
      const subs = [...text].map((ch) => this.literal(ch.codePointAt(0) as number, flags));
      return subs.length === 1 ? (subs[0] as Node) : { t: "cat", subs };
    }
    // Any other escape means outside a class what it means inside one: a character, or a class.
    const cp = this.classChar();
    return cp === null ? ANY : this.literal(cp, flags);
  }

  /** After the backslash of \pX, \p{Name}, \PX or \P{Name}: skips it. */
  private skipUnicodeClass(): void {
    this.i++; // p or P
    if (this.peek() === "{") {
      const end = this.s.indexOf("}", this.i);
      if (end === -1) throw new GiveUp();
      this.i = end + 1;
    } else this.next();
  }

  /** After the backslash of \xHH or \x{H…}: the code point. */
  private hexEscape(): number {
    const m = /^x(?:([0-9A-Fa-f]{2})|\{([0-9A-Fa-f]{1,8})\})/.exec(this.s.slice(this.i));
    if (!m) throw new GiveUp();
    this.i += m[0].length;
    const cp = Number.parseInt((m[1] ?? m[2]) as string, 16);
    if (cp > 0x10ffff) throw new GiveUp();
    return cp;
  }

  /** A bracketed class: a small set of known characters, or ANY. */
  private charClass(flags: Flags): Node {
    this.i++; // [
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.i++;
    }
    const cps: number[] = [];
    let unknown = false;
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new GiveUp();
      if (c === "]" && !first) {
        this.i++;
        break;
      }
      first = false;
      if (c === "[" && this.peek(1) === ":") {
        const end = this.s.indexOf(":]", this.i + 2);
        if (end === -1) throw new GiveUp();
        this.i = end + 2;
        unknown = true;
        continue;
      }
      const lo = this.classChar();
      if (lo === null) {
        unknown = true;
        continue;
      }
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.i++;
        const hi = this.classChar();
        if (hi === null || hi < lo) throw new GiveUp();
        if (hi - lo >= MAX_EXACT) unknown = true;
        else for (let cp = lo; cp <= hi; cp++) cps.push(cp);
      } else cps.push(lo);
    }
    if (negated || unknown || cps.length > MAX_EXACT) return ANY;
    const lits: Lit[] = [];
    for (const cp of cps) {
      const lit = charLit(cp, flags.fold);
      if (!lit) return ANY;
      if (!lits.some((l) => l.key === lit.key && l.src === lit.src)) lits.push(lit);
    }
    return { t: "chars", lits };
  }

  /** One character of a class (a code point), or null for a class escape such as \d or \pL. */
  private classChar(): number | null {
    if (this.peek() !== "\\") return this.next();
    this.i++;
    const c = this.peek();
    if (c === undefined) throw new GiveUp();
    if (Object.hasOwn(SIMPLE_ESCAPES, c)) {
      this.i++;
      return SIMPLE_ESCAPES[c] as number;
    }
    if ("dDsSwW".includes(c)) {
      this.i++;
      return null;
    }
    if (c === "p" || c === "P") {
      this.skipUnicodeClass();
      return null;
    }
    if (c === "x") return this.hexEscape();
    const cp = this.s.codePointAt(this.i) as number;
    // Escaped punctuation is itself; anything else (octal, \C, …) is beyond what this reads.
    if (cp < 128 && !/[0-9A-Za-z]/.test(c)) {
      this.i++;
      return cp;
    }
    throw new GiveUp();
  }
}
