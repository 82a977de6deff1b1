// Finding `old` text in a body the way replace and patch need it: every occurrence with its line,
// narrowed by start_line / context, with errors that say how many matched where, or what came close.
import { AfsError } from "../core/errors.js";
import { splitLines } from "../core/text.js";

export interface Occurrence {
  /** Offset in the normalized body. */
  index: number;
  /** 1-based line the occurrence starts on. */
  line: number;
}

export interface Constraints {
  start_line?: number;
  context_before?: string;
  context_after?: string;
}

export interface Selection extends Constraints {
  all?: boolean;
  expected_occurrences?: number;
}

/** Non-overlapping occurrences, left to right (the ones a replace-all would change). */
export function findAll(body: string, needle: string): Occurrence[] {
  const out: Occurrence[] = [];
  let line = 1;
  let scanned = 0;
  for (let i = body.indexOf(needle); i !== -1; i = body.indexOf(needle, i + needle.length)) {
    for (let j = body.indexOf("\n", scanned); j !== -1 && j < i; j = body.indexOf("\n", j + 1)) line++;
    scanned = i;
    out.push({ index: i, line });
  }
  return out;
}

const hasConstraints = (c: Constraints): boolean =>
  c.start_line !== undefined || !!c.context_before || !!c.context_after;

function satisfies(body: string, oldLength: number, o: Occurrence, c: Constraints): boolean {
  if (c.start_line !== undefined && o.line !== c.start_line) return false;
  if (c.context_before && !body.slice(0, o.index).endsWith(c.context_before)) return false;
  if (c.context_after && !body.startsWith(c.context_after, o.index + oldLength)) return false;
  return true;
}

/** "3, 9, 12" — at most a dozen, then how many more. */
export function lineList(occurrences: Occurrence[]): string {
  const shown = occurrences.slice(0, 12).map((o) => o.line);
  const more = occurrences.length - shown.length;
  return more > 0 ? `${shown.join(", ")}, … (+${more} more)` : shown.join(", ");
}

const times = (n: number): string => (n === 1 ? "1 time" : `${n} times`);
const linesWord = (occ: Occurrence[]): string => (occ.length === 1 ? "line" : "lines");

/**
 * The occurrences of `old` an edit should change. Without `all` or `expected_occurrences` exactly
 * one occurrence may satisfy the constraints; `expected_occurrences` asks for exactly that many
 * (all of which are changed); `all` takes every occurrence and allows no constraints.
 */
export function selectOccurrences(path: string, body: string, old: string, s: Selection): Occurrence[] {
  if (old === "") throw new AfsError("INVALID_ARGUMENT", "old must not be empty; to add text use insert", { path });
  if (s.all && hasConstraints(s)) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "all=true cannot be combined with start_line, context_before or context_after; drop one or the other",
      { path },
    );
  }
  const found = findAll(body, old);
  if (found.length === 0) throw notFoundWithHint(path, body, old);
  const matching = found.filter((o) => satisfies(body, old.length, o, s));
  if (matching.length === 0) {
    throw new AfsError(
      "NOT_FOUND",
      `old text occurs ${times(found.length)} (${linesWord(found)} ${lineList(found)}) in ${path} but none ${describe(s)}; fix or drop the constraint`,
      { path, count: 0, lines: found.map((o) => o.line) },
    );
  }
  if (s.expected_occurrences !== undefined) {
    if (matching.length !== s.expected_occurrences) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `old text matches ${times(matching.length)} (${linesWord(matching)} ${lineList(matching)}) in ${path}, not expected_occurrences=${s.expected_occurrences}; nothing was changed`,
        { path, count: matching.length, lines: matching.map((o) => o.line) },
      );
    }
    return matching;
  }
  if (s.all || matching.length === 1) return matching;
  throw new AfsError(
    "INVALID_ARGUMENT",
    `old text matches ${times(matching.length)} (lines ${lineList(matching)}) in ${path}; add context_before/context_after or start_line, or pass all=true`,
    { path, count: matching.length, lines: matching.map((o) => o.line) },
  );
}

function describe(c: Constraints): string {
  const parts: string[] = [];
  if (c.start_line !== undefined) parts.push(`starts on line ${c.start_line}`);
  if (c.context_before) parts.push("is preceded by context_before");
  if (c.context_after) parts.push("is followed by context_after");
  return parts.join(" and ");
}

/** Replaces the given occurrences (as found in `body`) of a text of length `oldLength`. */
export function replaceAt(body: string, occurrences: Occurrence[], oldLength: number, replacement: string): string {
  let out = "";
  let from = 0;
  for (const o of occurrences) {
    out += body.slice(from, o.index) + replacement;
    from = o.index + oldLength;
  }
  return out + body.slice(from);
}

// --- hints for text that is not there ------------------------------------------------------

const squash = (s: string): string => s.replace(/\s+/g, " ").trim();

function notFoundWithHint(path: string, body: string, old: string): AfsError {
  const hint = closestHint(body, old);
  return new AfsError(
    "NOT_FOUND",
    `old text not found in ${path}${hint ? `; ${hint}` : ""}. Read the file again and copy old exactly (whitespace and indentation included)`,
    { path, count: 0 },
  );
}

/** A sentence pointing at where the caller probably meant, or "" when nothing comes close. */
export function closestHint(body: string, old: string): string {
  const lines = splitLines(body);
  const wanted = splitLines(old).map(squash);
  while (wanted.length > 0 && wanted[0] === "") wanted.shift();
  while (wanted.length > 0 && wanted[wanted.length - 1] === "") wanted.pop();
  if (wanted.length === 0) return "";
  const have = lines.map(squash);
  // Same lines apart from whitespace: the most common reason an exact match fails.
  for (let i = 0; i + wanted.length <= have.length; i++) {
    if (wanted.every((w, k) => have[i + k] === w)) {
      const range = wanted.length === 1 ? `line ${i + 1}` : `lines ${i + 1}-${i + wanted.length}`;
      return `${range} match old except for whitespace`;
    }
  }
  const first = wanted[0] as string;
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < have.length; i++) {
    const score = similarity(first, have[i] as string);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  if (best < 0 || bestScore < 0.5) return "";
  const text = lines[best] as string;
  const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text;
  return `the closest line to the start of old is line ${best + 1}: ${JSON.stringify(shown)}`;
}

/** Dice coefficient over character bigrams: cheap, linear, good enough to point at a line. */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const g = a.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = grams.get(g) ?? 0;
    if (n > 0) {
      grams.set(g, n - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}
