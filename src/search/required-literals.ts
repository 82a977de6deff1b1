// Required literals of an RE2 pattern: an AND/OR of strings that every match must contain, used
// to ask the content index for candidate files and to find candidate lines fast. Soundness is all
// that matters (never claim a literal the match can do without); anything this parser does not
// recognise exactly makes it give up and answer "nothing required", which means a full scan.
import { GiveUp, type Lit, MAX_EXACT, type Node, Parser } from "./re2-parse.js";

export type { Lit } from "./re2-parse.js";

// From the parsed tree to required literals, after Russ Cox's trigram query analysis.
export type Required =
  | { op: "all" }
  | { op: "lit"; lit: Lit }
  | { op: "and"; of: Required[] }
  | { op: "or"; of: Required[] };

export interface PatternFacts {
  required: Required;
  /** The pattern uses ^, $, \A or \z, whose meaning differs between a line and a whole text. */
  anchored: boolean;
}

const ALL: Required = { op: "all" };
const EMPTY: Lit = { key: "", src: "", plain: "" };
/** Most literals in one query; past it the query is dropped (a scan is cheaper than a huge query). */
const MAX_LITERALS = 64;
/** Shortest literal the trigram index can use. */
const MIN_LITERAL = 3;

interface Info {
  /** The node matches exactly one of these strings; null when that set is unknown or too large. */
  exact: Lit[] | null;
  /** What any match of the node must contain (beyond `exact`). */
  match: Required;
}

const concat = (a: Lit, b: Lit): Lit => ({
  key: a.key + b.key,
  src: a.src + b.src,
  plain: a.plain !== null && b.plain !== null ? a.plain + b.plain : null,
});

function dedupe(lits: readonly Lit[]): Lit[] {
  const seen = new Map<string, Lit>();
  for (const l of lits) seen.set(`${l.key}\0${l.src}`, l);
  return [...seen.values()];
}

/** What a node with this exact set requires: one of the strings, if all are long enough. */
function fromExact(exact: readonly Lit[] | null, min: number): Required {
  if (!exact || exact.length === 0 || exact.some((l) => l.key.length < min)) return ALL;
  return or(exact.map((lit) => ({ op: "lit", lit })));
}

function and(parts: readonly Required[]): Required {
  const of: Required[] = [];
  for (const p of parts) {
    if (p.op === "and") of.push(...p.of);
    else if (p.op !== "all") of.push(p);
  }
  return of.length === 0 ? ALL : of.length === 1 ? (of[0] as Required) : { op: "and", of };
}

function or(parts: readonly Required[]): Required {
  const of: Required[] = [];
  for (const p of parts) {
    if (p.op === "all") return ALL;
    if (p.op === "or") of.push(...p.of);
    else of.push(p);
  }
  return of.length === 0 ? ALL : of.length === 1 ? (of[0] as Required) : { op: "or", of };
}

function analyse(node: Node, min: number): Info {
  switch (node.t) {
    case "chars":
      return { exact: node.lits, match: ALL };
    case "empty":
      return { exact: [EMPTY], match: ALL };
    case "alt": {
      const infos = node.subs.map((n) => analyse(n, min));
      const union = infos.every((i) => i.exact) ? dedupe(infos.flatMap((i) => i.exact as Lit[])) : null;
      if (union && union.length <= MAX_EXACT) return { exact: union, match: or(infos.map((i) => i.match)) };
      return { exact: null, match: or(infos.map((i) => and([i.match, fromExact(i.exact, min)]))) };
    }
    case "rep": {
      const sub = analyse(node.sub, min);
      if (node.min === 1 && node.max === 1) return sub;
      if (node.min === 0) {
        if (node.max === 1 && sub.exact) return { exact: dedupe([...sub.exact, EMPTY]), match: ALL };
        return { exact: null, match: ALL };
      }
      return { exact: null, match: and([sub.match, fromExact(sub.exact, min)]) };
    }
    case "cat": {
      // `run` is the exact set of the trailing stretch of exact pieces; `whole` says it spans all.
      let run: Lit[] = [EMPTY];
      let whole = true;
      const needs: Required[] = [];
      for (const sub of node.subs.map((n) => analyse(n, min))) {
        needs.push(sub.match);
        if (sub.exact && run.length * sub.exact.length <= MAX_EXACT) {
          run = dedupe(run.flatMap((a) => (sub.exact as Lit[]).map((b) => concat(a, b))));
          continue;
        }
        needs.push(fromExact(run, min));
        whole = false;
        run = sub.exact ?? [EMPTY];
      }
      if (whole) return { exact: run, match: and(needs) };
      return { exact: null, match: and([...needs, fromExact(run, min)]) };
    }
  }
}

function countLits(r: Required): number {
  return r.op === "lit" ? 1 : r.op === "all" ? 0 : r.of.reduce((n, p) => n + countLits(p), 0);
}

/**
 * Required literals of an RE2 pattern (`fold`: the whole pattern is case-insensitive), each at
 * least `min` units long: 3 for the trigram index, shorter ones still help a scan.
 */
export function requiredLiterals(pattern: string, fold: boolean, min = MIN_LITERAL): PatternFacts {
  const parser = new Parser(pattern);
  let tree: Node;
  try {
    tree = parser.parse(fold);
  } catch (e) {
    if (e instanceof GiveUp) return { required: ALL, anchored: true };
    throw e;
  }
  const info = analyse(tree, min);
  const required = and([info.match, fromExact(info.exact, min)]);
  return { required: countLits(required) > MAX_LITERALS ? ALL : required, anchored: parser.anchored };
}
