// Turning ranked passage lists into one ranking of files: each list is collapsed to files (a file
// ranks where its best passage does), then lists are fused by reciprocal rank fusion (Cormack et al.,
// k = 60), and each file is shown by the passage the lists agree on most.
import type { Hash } from "../core/hash.js";
import type { PassageRef } from "./query-index.js";
import type { SearchType } from "./query-plan.js";

export const RRF_K = 60;

export interface PassageHit {
  passage: PassageRef;
  /** The list's own score: BM25 for lex, cosine similarity for vec and hyde. */
  score: number;
}

export interface RankedFiles {
  search: number;
  type: SearchType;
  /** In rank order; `rank` is 1-based. */
  files: { path: string; rank: number; passage: PassageRef; score: number }[];
  /** 1-based rank of every passage the list reached, by passageKey. */
  passageRank: Map<string, number>;
}

export interface Component {
  search: number;
  type: SearchType;
  /** The file's rank in that search. */
  rank: number;
  score: number;
}

export interface FusedFile {
  path: string;
  blob: Hash;
  passage: PassageRef;
  /** The reported score: the search's own score when one search ran, the fused score otherwise. */
  score: number;
  /** Sum over searches of 1 / (RRF_K + rank). */
  fused: number;
  types: SearchType[];
  components: Component[];
}

const passageKey = (c: Pick<PassageRef, "blob" | "seq">): string => `${c.blob}:${c.seq}`;

/**
 * Collapses a passage list into at most `limit` files; a blob held by several paths ranks each.
 * `complete` is false when the list stopped because `limit` files were reached.
 */
export function collapse(
  search: number,
  type: SearchType,
  hits: readonly PassageHit[],
  pathsOf: (blob: Hash) => readonly string[],
  limit: number,
): RankedFiles & { complete: boolean } {
  const files: RankedFiles["files"] = [];
  const seen = new Set<string>();
  const passageRank = new Map<string, number>();
  for (const [i, hit] of hits.entries()) {
    if (files.length >= limit) return { search, type, files, passageRank, complete: false };
    passageRank.set(passageKey(hit.passage), i + 1);
    for (const path of pathsOf(hit.passage.blob)) {
      if (seen.has(path) || files.length >= limit) continue;
      seen.add(path);
      files.push({ path, rank: files.length + 1, passage: hit.passage, score: hit.score });
    }
  }
  return { search, type, files, passageRank, complete: true };
}

const TYPE_ORDER: readonly SearchType[] = ["lex", "vec", "hyde"];

/** Reciprocal rank fusion of file rankings, best first (ties by path). */
export function fuse(lists: readonly RankedFiles[]): FusedFile[] {
  const byPath = new Map<string, { components: Component[]; fused: number; passages: PassageRef[] }>();
  for (const list of lists) {
    for (const f of list.files) {
      let entry = byPath.get(f.path);
      if (!entry) {
        entry = { components: [], fused: 0, passages: [] };
        byPath.set(f.path, entry);
      }
      entry.fused += 1 / (RRF_K + f.rank);
      entry.components.push({ search: list.search, type: list.type, rank: f.rank, score: f.score });
      entry.passages.push(f.passage);
    }
  }
  const passageScore = (c: PassageRef): number =>
    lists.reduce((sum, l) => {
      const rank = l.passageRank.get(passageKey(c));
      return rank === undefined ? sum : sum + 1 / (RRF_K + rank);
    }, 0);
  const out: FusedFile[] = [];
  for (const [path, e] of byPath) {
    const passage = e.passages.reduce((best, c) => {
      const d = passageScore(c) - passageScore(best);
      return d > 0 || (d === 0 && c.seq < best.seq) ? c : best;
    });
    const types = TYPE_ORDER.filter((t) => e.components.some((c) => c.type === t));
    const score = lists.length === 1 ? (e.components[0] as Component).score : e.fused;
    out.push({ path, blob: passage.blob, passage, score, fused: e.fused, types, components: e.components });
  }
  return out.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
