// grep over a text's UTF-8 bytes held as a latin1 string (one unit per byte): a fixed string is
// found with indexOf, a regex with its byte translation (search/byte-regex.ts), and only the lines
// reported are decoded. Returns null when it cannot answer exactly; the caller then decodes and scans.

import { WeightedLru } from "../core/lru.js";
import { byteSource, caselessSource } from "../search/byte-regex.js";
import { fixedFinder } from "../search/find-fixed.js";
import type { Lit } from "../search/required-literals.js";
import { blockBounds } from "../search/text-blocks.js";
import type { BlockRun } from "../search/text-index.js";
import type { MatcherOptions } from "./regex.js";

/** How a pattern is found in bytes; built once per search. */
export interface ByteMatcher {
  /** Offset of the next place at or after `from` where a line that may match holds its required text, or -1. */
  find: ((view: string, from: number) => number) | null;
  /** When above 0, `find` finds the whole pattern (a fixed string) and this is its length in bytes. */
  exactLength: number;
  /** The exact pattern over the bytes of one line (global, for lastIndex); null: ask the line matcher. */
  line: RegExp | null;
  /**
   * Time spent in this search's regex execs, and the bytes they were given. Irregexp backtracks;
   * past a million backtracks V8 finishes an exec on its linear engine, which bounds each exec but
   * is slow, and a pattern can pay that on every line. So a search whose execs run slower than
   * RE2 would (~20 MB/s) leaves the byte path for RE2 (re2js), whose time is linear in the text.
   */
  spent: { ms: number; bytes: number };
}

/** Exec time a search may spend before its speed is judged, and the slowest speed it keeps (bytes per ms). */
const GRACE_MS = 50;
const MIN_BYTES_PER_MS = 20_000;
/** Regex execs without a literal run on pieces of about this size, cut at line ends. */
const SEGMENT = 64 * 1024;
const BOM = "\xef\xbb\xbf";
const CR = 13;

const latin1 = (s: string): string => Buffer.from(s, "utf8").toString("latin1");

/** A literal (from required-literals) as a byte finder. */
function literalFinder(lits: readonly Lit[]): ByteMatcher["find"] {
  const sources: string[] = [];
  for (const l of lits) {
    if (l.plain !== null) sources.push(latin1(l.plain).replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&"));
    else {
      const src = caselessSource(l.key);
      if (src === null) return null;
      sources.push(src);
    }
  }
  const only = lits.length === 1 ? lits[0]?.plain : null;
  if (only !== null && only !== undefined) return fixedFinder(latin1(only));
  // Literal characters and small classes only: this RegExp runs in linear time.
  const re = new RegExp(sources.join("|"), "g");
  return (view, from) => {
    re.lastIndex = from;
    return re.exec(view)?.index ?? -1;
  };
}

/**
 * The byte matcher for a pattern, or null when bytes cannot be searched exactly (then the text is
 * decoded). `lits`: the literals one of which every match holds (null: none).
 */
export function byteMatcher(o: MatcherOptions, lits: readonly Lit[] | null): ByteMatcher | null {
  const plainPattern = o.mode === "fixed" && !o.word && !o.line;
  if (plainPattern && !o.pattern.includes("\n")) {
    if (!o.ignoreCase) {
      const needle = latin1(o.pattern);
      return {
        find: fixedFinder(needle),
        exactLength: needle.length,
        line: null,
        spent: { ms: 0, bytes: 0 },
      };
    }
    const src = caselessSource(o.pattern);
    if (src !== null) {
      const re = new RegExp(src, "g");
      // Each spelling has its own byte length; the line regex tells whether the hit ends within the line.
      return { find: null, exactLength: 0, line: re, spent: { ms: 0, bytes: 0 } };
    }
  }
  const find = lits ? literalFinder(lits) : null;
  const exact = o.mode === "regexp" && !o.ignoreCase && !o.word && !o.line ? byteSource(o.pattern) : null;
  if (exact !== null) return { find, exactLength: 0, line: new RegExp(exact, "g"), spent: { ms: 0, bytes: 0 } };
  // Without an exact translation, lines are found by a literal and checked by the line matcher.
  return find ? { find, exactLength: 0, line: null, spent: { ms: 0, bytes: 0 } } : null;
}

export interface ViewOptions {
  /** The blob's content hash: what is worked out about its blocks is kept under it. */
  key: string;
  /** Most lines to select; at least 1. */
  max: number;
  /** Lines up to this number are skipped (a cursor's resume point). */
  after: number;
  /** Line numbers are needed (otherwise reported as 0, which saves counting line ends). */
  numbered: boolean;
  /** The decoded text of selected lines is needed. */
  withText: boolean;
  /** The exact test of one decoded line, for hits the byte matcher cannot decide. */
  matches: (line: string) => boolean;
}

const decodeRange = (view: string, start: number, end: number): string =>
  Buffer.from(view.slice(start, end), "latin1").toString("utf8");

// Per content hash, so never stale; small (a number per 16 KiB of text). Process-wide on purpose
// (here and marksOf): facts about content, the same for every engine and caller.
const boundsOf = new WeightedLru<string, number[]>(1 << 20, (b) => b.length);

/** A view's block boundaries (text-blocks.ts), kept per blob. */
function viewBlocks(key: string, view: string): number[] {
  let b = boundsOf.get(key);
  if (!b || b[b.length - 1] !== view.length) {
    b = blockBounds(view.length, (from) => view.indexOf("\n", from));
    boundsOf.set(key, b);
  }
  return b;
}

/** Line numbers are known every 2^MARK_SHIFT bytes, so numbering a hit counts line ends from the nearest mark before it. */
const MARK_SHIFT = 10;
// Per content hash, so never stale: 4 bytes per KiB of text.
const marksOf = new WeightedLru<string, Int32Array>(1 << 22, (m) => m.length);

/** marks[i]: the number of the line holding byte i << MARK_SHIFT (1 + the line ends before it), kept per blob. */
function lineMarks(key: string, view: string): Int32Array {
  let marks = marksOf.get(key);
  if (marks && marks.length === (view.length >>> MARK_SHIFT) + 1) return marks;
  marks = new Int32Array((view.length >>> MARK_SHIFT) + 1);
  let line = 1;
  let i = 0;
  for (let nl = view.indexOf("\n"); nl !== -1; nl = view.indexOf("\n", nl + 1)) {
    while (i < marks.length && i << MARK_SHIFT <= nl) marks[i++] = line;
    line++;
  }
  while (i < marks.length) marks[i++] = line;
  marksOf.set(key, marks);
  return marks;
}

/** Byte ranges [start, end) of these blocks of a view, adjacent ones joined. */
function blockRanges(view: string, bounds: readonly number[], blocks: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const b of blocks) {
    const start = bounds[b];
    const end = bounds[b + 1];
    // A block this cut does not know means the index cut differently: search everything.
    if (start === undefined || end === undefined) return [[0, view.length]];
    const last = ranges[ranges.length - 1];
    if (last && last[1] === start) last[1] = end;
    else ranges.push([start, end]);
  }
  return ranges;
}

type Selected = { line: number; text: string };

/**
 * The selected lines of a view, in order, or null when the byte path gave up (too slow a regex).
 * `blocks`: the only blocks that may hold a matching line (null: all of them).
 */
export function selectInView(
  view: string,
  m: ByteMatcher,
  blocks: readonly number[] | null,
  o: ViewOptions,
): Selected[] | null {
  const out: Selected[] = [];
  const bom = view.startsWith(BOM) ? BOM.length : 0;
  // Line numbers count line ends once, from the start to each selected line, across the ranges.
  let lineNo = 1;
  let counted = bom;
  const marks = o.numbered ? lineMarks(o.key, view) : null;
  const numberOf = (lineStart: number): number => {
    const mark = lineStart >>> MARK_SHIFT;
    if (marks && mark << MARK_SHIFT > counted) {
      lineNo = marks[mark] as number;
      counted = mark << MARK_SHIFT;
    }
    for (let nl = view.indexOf("\n", counted); nl !== -1 && nl < lineStart; nl = view.indexOf("\n", nl + 1)) lineNo++;
    counted = lineStart;
    return lineNo;
  };
  const known = blocks === null ? null : viewBlocks(o.key, view);
  const select = (lineStart: number, textEnd: number): boolean => {
    const line = o.numbered ? numberOf(lineStart) : 0;
    if (o.numbered && line <= o.after) return false;
    out.push({ line, text: o.withText ? decodeRange(view, lineStart, textEnd) : "" });
    return true;
  };
  const ranges = known === null || blocks === null ? [[0, view.length]] : blockRanges(view, known, blocks);
  for (const [start, end] of ranges as [number, number][]) {
    // A range is searched as a slice (no copy in V8), so no finder runs past it.
    const slice = start === 0 && end === view.length ? view : view.slice(start, end);
    if (
      !selectInRange(slice, start === 0 ? bom : 0, m, o.max - out.length, o.matches, (s, e) =>
        select(s + start, e + start),
      )
    ) {
      return null;
    }
    if (out.length >= o.max) break;
  }
  return out;
}

/**
 * The selected lines of a text of which only these runs of blocks were read (TextIndex.runs), as
 * selectInView gives them for the same blocks; null when the byte path gave up.
 */
export function selectInRuns(runs: readonly BlockRun[], m: ByteMatcher, o: ViewOptions): Selected[] | null {
  const out: Selected[] = [];
  for (const run of runs) {
    const view = run.view;
    // Line numbers count line ends from the run's start, whose line number the index knows.
    let lineNo = run.line;
    let counted = 0;
    const select = (lineStart: number, textEnd: number): boolean => {
      let line = 0;
      if (o.numbered) {
        for (let nl = view.indexOf("\n", counted); nl !== -1 && nl < lineStart; nl = view.indexOf("\n", nl + 1))
          lineNo++;
        counted = lineStart;
        line = lineNo;
        if (line <= o.after) return false;
      }
      out.push({ line, text: o.withText ? decodeRange(view, lineStart, textEnd) : "" });
      return true;
    };
    const bom = run.start === 0 && view.startsWith(BOM) ? BOM.length : 0;
    if (!selectInRange(view, bom, m, o.max - out.length, o.matches, select)) return null;
    if (out.length >= o.max) break;
  }
  return out;
}

/**
 * Calls `select` with the [start, end) of each line of `view` (from `body` on) that matches, until
 * it has taken `max` (it returns false for a line it passes over); false when the byte path gave up.
 */
function selectInRange(
  view: string,
  body: number,
  m: ByteMatcher,
  max: number,
  matches: (line: string) => boolean,
  select: (start: number, end: number) => boolean,
): boolean {
  const end = view.length;
  // A regex without a literal runs on segments, so one exec never scans more than a segment.
  let segStart = body;
  let segEnd = body;
  let seg = "";
  const timed = (re: RegExp, s: string, from: number): RegExpExecArray | null => {
    re.lastIndex = from;
    const t = performance.now();
    const r = re.exec(s);
    m.spent.ms += performance.now() - t;
    m.spent.bytes += s.length - from;
    return r;
  };
  let selected = 0;
  let from = body;
  while (from < end && selected < max) {
    if (m.spent.ms > GRACE_MS && m.spent.ms * MIN_BYTES_PER_MS > m.spent.bytes) return false;
    let hit: number;
    let hitEnd = -1;
    if (m.find) {
      hit = m.find(view, from);
      if (hit === -1) break;
    } else {
      const re = m.line as RegExp;
      if (from >= segEnd) {
        segStart = from;
        const cut = view.indexOf("\n", from + SEGMENT);
        segEnd = cut === -1 ? end : cut + 1;
        seg = view.slice(segStart, segEnd);
      }
      const r = timed(re, seg, from - segStart);
      if (!r) {
        from = segEnd;
        continue;
      }
      hit = segStart + r.index;
      hitEnd = hit + r[0].length;
    }
    // The empty place after a final LF is not a line.
    if (hit >= end && (hit === body || view.charCodeAt(end - 1) === 10)) break;
    const lineStart = hit === from ? from : Math.max(from, view.lastIndexOf("\n", hit - 1) + 1);
    const nl = view.indexOf("\n", hit);
    const lineEnd = nl === -1 ? end : nl;
    const textEnd = nl > lineStart && view.charCodeAt(nl - 1) === CR ? nl - 1 : lineEnd;
    let isMatch: boolean;
    if (m.exactLength > 0) isMatch = hit + m.exactLength <= textEnd || matches(decodeRange(view, lineStart, textEnd));
    // A regex hit that ends within the line's text is a match; others are tried on the line alone.
    else if (m.line)
      isMatch = (!m.find && hitEnd <= textEnd) || timed(m.line, view.slice(lineStart, textEnd), 0) !== null;
    else isMatch = matches(decodeRange(view, lineStart, textEnd));
    if (isMatch && select(lineStart, textEnd)) selected++;
    from = nl === -1 ? end : nl + 1;
  }
  return true;
}
