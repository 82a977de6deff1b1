// How grep reads one text fast and exactly: find the offsets where a required literal occurs
// (indexOf, or a literal-only RegExp for case-insensitive spellings), work out only those lines,
// and let the exact RE2 line matcher decide. Lines are those of splitting on LF / CRLF after the BOM.
import { RE2JS } from "re2js";
import { fixedFinder } from "../search/find-fixed.js";
import type { Lit, Required } from "../search/required-literals.js";
import { requiredLiterals } from "../search/required-literals.js";
import type { LiteralQuery } from "../search/text-index.js";
import { type ByteMatcher, byteMatcher } from "./grep-bytes.js";
import { escapeRegex, globToRegex, lineMatcher, type MatcherOptions } from "./regex.js";

export interface ScanPlan {
  /** The exact test of one line (without its line ending). */
  matches: (line: string) => boolean;
  /** Offset of the next place at or after `from` where a line that may match has its required text, or -1. Null: every line may match. */
  next: ((text: string, from: number) => number) | null;
  /**
   * When above 0, `next` finds the pattern itself (a fixed string, no word or line condition) and
   * this is its length: a hit that ends within a line's text is a match without asking `matches`.
   */
  exactLength: number;
  /** A whole-text test that is never false for a text with a matching line; null when none is cheap and safe. */
  mayMatch: ((text: string) => boolean) | null;
  /** What the content index is asked for. */
  query: LiteralQuery;
  /** How to search a text's bytes without decoding it; null when only the decoded scan is exact. */
  bytes: ByteMatcher | null;
}

/** The scan plan for a pattern: the exact matcher, plus what its required literals allow. */
export function scanPlan(o: MatcherOptions): ScanPlan {
  const matches = lineMatcher(o);
  // The literals of the pattern itself; the word and line wrappers only narrow its matches.
  const inner = o.mode === "fixed" ? escapeRegex(o.pattern) : o.mode === "glob" ? globToRegex(o.pattern) : o.pattern;
  const facts = requiredLiterals(inner, o.ignoreCase === true);
  // For finding lines any literal helps, even one character; the index needs trigrams.
  const scan = requiredLiterals(inner, o.ignoreCase === true, 1).required;
  let mayMatch: ScanPlan["mayMatch"] = null;
  if (!facts.anchored && scan.op === "all") {
    // Without anchors a line's match is also a match in the whole text, so one DFA pass rules files out.
    const whole = RE2JS.compile(inner, o.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    mayMatch = (text) => whole.test(text);
  }
  const whole =
    o.mode === "fixed" && !o.word && !o.line && scan.op === "lit" && scan.lit.key.length === o.pattern.length;
  return {
    matches,
    bytes: byteMatcher(o, literalSet(scan)),
    next: finder(scan),
    exactLength: whole ? o.pattern.length : 0,
    mayMatch,
    query: toQuery(facts.required),
  };
}

function toQuery(r: Required): LiteralQuery {
  switch (r.op) {
    case "all":
      return r;
    case "lit":
      return { op: "lit", folded: r.lit.key };
    case "and":
    case "or":
      return { op: r.op, of: r.of.map(toQuery) };
  }
}

/** A finder for the most selective literal (or alternation of literals) every match contains. */
function finder(r: Required): ScanPlan["next"] {
  const lits = literalSet(r);
  if (!lits) return null;
  const needle = lits.length === 1 ? lits[0]?.plain : null;
  if (needle) return fixedFinder(needle);
  // Literal characters and small classes only: no quantifiers, so this RegExp runs in linear time.
  const re = new RegExp(lits.map((l) => l.src).join("|"), "g");
  return (text, from) => {
    re.lastIndex = from;
    return re.exec(text)?.index ?? -1;
  };
}

/** Literals one of which every match contains: the query itself, or its best AND member. */
function literalSet(r: Required): Lit[] | null {
  const direct = (q: Required): Lit[] | null =>
    q.op === "lit"
      ? [q.lit]
      : q.op === "or" && q.of.every((p) => p.op === "lit")
        ? q.of.map((p) => (p as { lit: Lit }).lit)
        : null;
  if (r.op !== "and") return direct(r);
  let best: Lit[] | null = null;
  let bestScore = -1;
  for (const part of r.of) {
    const lits = direct(part);
    if (!lits) continue;
    // Longer and fewer alternatives select fewer lines.
    const score = Math.min(...lits.map((l) => l.key.length)) / lits.length;
    if (score > bestScore) {
      best = lits;
      bestScore = score;
    }
  }
  return best;
}

export interface SelectedLine {
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

export interface SelectOptions {
  invert: boolean;
  /** Most lines to select (max_count), counting those selected before `after`. */
  max: number;
  /** Lines up to and including this number were handled by an earlier page. */
  after: number;
  /** Stop early: called with each selected line; return false to stop. */
  onLine: (l: SelectedLine) => boolean;
  contextBefore: number;
  contextAfter: number;
}

/** Selects the lines of `text` grep reports, in order; returns how many it selected. */
export function selectLines(text: string, plan: ScanPlan, o: SelectOptions): number {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body === "" || o.max <= 0) return 0;
  let selected = 0;
  const emit = (no: number, start: number, end: number): boolean => {
    selected++;
    const line: SelectedLine = { line: no, text: lineText(body, start, end) };
    if (o.contextBefore > 0) line.before = linesBefore(body, start, o.contextBefore);
    if (o.contextAfter > 0) line.after = linesAfter(body, end, o.contextAfter);
    return o.onLine(line) && selected < o.max;
  };

  if (!o.invert && plan.next) {
    // Only lines holding the required text can match: jump from one such place to the next.
    const next = plan.next;
    let start = 0;
    let no = 1;
    for (let hit = next(body, 0); hit !== -1; hit = next(body, start)) {
      for (let nl = body.indexOf("\n", start); nl !== -1 && nl < hit; nl = body.indexOf("\n", start)) {
        start = nl + 1;
        no++;
      }
      const nl = body.indexOf("\n", Math.max(hit, start));
      const end = nl === -1 ? body.length : nl;
      const textEnd = nl > start && body.charCodeAt(nl - 1) === 13 ? nl - 1 : end;
      const isMatch =
        plan.exactLength > 0 && hit + plan.exactLength <= textEnd ? true : plan.matches(lineText(body, start, end));
      if (no > o.after && isMatch && !emit(no, start, end)) break;
      if (nl === -1) break;
      start = nl + 1;
      no++;
    }
    return selected;
  }

  if (!o.invert && plan.mayMatch && !plan.mayMatch(body)) return 0;
  // Every line in order; with a finder, a line without the required text cannot match.
  let hit = plan.next ? plan.next(body, 0) : 0;
  for (let start = 0, no = 1; start < body.length; no++) {
    const nl = body.indexOf("\n", start);
    const end = nl === -1 ? body.length : nl;
    if (plan.next && hit !== -1 && hit < start) hit = plan.next(body, start);
    const candidate = !plan.next || (hit !== -1 && hit < end + 1);
    if (no > o.after) {
      const isMatch = candidate && plan.matches(lineText(body, start, end));
      if (isMatch !== o.invert && !emit(no, start, end)) break;
    }
    start = end + 1;
  }
  return selected;
}

/** The line [start, end) without the CR of a CRLF ending. */
function lineText(body: string, start: number, end: number): string {
  return end < body.length && end > start && body.charCodeAt(end - 1) === 13
    ? body.slice(start, end - 1)
    : body.slice(start, end);
}

function linesBefore(body: string, start: number, n: number): string[] {
  const out: string[] = [];
  let end = start - 1; // the LF ending the previous line
  while (out.length < n && end >= 0) {
    const from = end === 0 ? 0 : body.lastIndexOf("\n", end - 1) + 1;
    out.push(lineText(body, from, end));
    end = from - 1;
  }
  return out.reverse();
}

function linesAfter(body: string, end: number, n: number): string[] {
  const out: string[] = [];
  // A final LF ends the last line; it does not start an empty one.
  for (let start = end + 1; out.length < n && start < body.length; ) {
    const nl = body.indexOf("\n", start);
    const e = nl === -1 ? body.length : nl;
    out.push(lineText(body, start, e));
    start = e + 1;
  }
  return out;
}
