// Turning ranked chunk lists into one ranking of files: each list is collapsed to files (a file
// ranks where its best chunk does), then lists are fused by reciprocal rank fusion (Cormack et al.,
// k = 60), and each file is shown by the chunk the lists agree on most.
import type { Hash } from "../core/hash.js";
import type { ChunkRef } from "./query-index.js";
import type { SearchType } from "./query-plan.js";

export const RRF_K = 60;

export interface ChunkHit {
  chunk: ChunkRef;
  /** The list's own score: BM25 for lex, cosine similarity for vec and hyde. */
  score: number;
}

export interface RankedFiles {
  search: number;
  type: SearchType;
  /** In rank order; `rank` is 1-based. */
  files: { path: string; rank: number; chunk: ChunkRef; score: number }[];
  /** 1-based rank of every chunk the list reached, by chunkKey. */
  chunkRank: Map<string, number>;
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
  chunk: ChunkRef;
  /** The reported score: the search's own score when one search ran, the fused score otherwise. */
  score: number;
  /** Sum over searches of 1 / (RRF_K + rank). */
  fused: number;
  types: SearchType[];
  components: Component[];
}

const chunkKey = (c: Pick<ChunkRef, "blob" | "seq">): string => `${c.blob}:${c.seq}`;

/**
 * Collapses a chunk list into at most `limit` files; a blob held by several paths ranks each.
 * `complete` is false when the list stopped because `limit` files were reached.
 */
export function collapse(
  search: number,
  type: SearchType,
  hits: readonly ChunkHit[],
  pathsOf: (blob: Hash) => readonly string[],
  limit: number,
): RankedFiles & { complete: boolean } {
  const files: RankedFiles["files"] = [];
  const seen = new Set<string>();
  const chunkRank = new Map<string, number>();
  for (const [i, hit] of hits.entries()) {
    if (files.length >= limit) return { search, type, files, chunkRank, complete: false };
    chunkRank.set(chunkKey(hit.chunk), i + 1);
    for (const path of pathsOf(hit.chunk.blob)) {
      if (seen.has(path) || files.length >= limit) continue;
      seen.add(path);
      files.push({ path, rank: files.length + 1, chunk: hit.chunk, score: hit.score });
    }
  }
  return { search, type, files, chunkRank, complete: true };
}

const TYPE_ORDER: readonly SearchType[] = ["lex", "vec", "hyde"];

/** Reciprocal rank fusion of file rankings, best first (ties by path). */
export function fuse(lists: readonly RankedFiles[]): FusedFile[] {
  const byPath = new Map<string, { components: Component[]; fused: number; chunks: ChunkRef[] }>();
  for (const list of lists) {
    for (const f of list.files) {
      let entry = byPath.get(f.path);
      if (!entry) {
        entry = { components: [], fused: 0, chunks: [] };
        byPath.set(f.path, entry);
      }
      entry.fused += 1 / (RRF_K + f.rank);
      entry.components.push({ search: list.search, type: list.type, rank: f.rank, score: f.score });
      entry.chunks.push(f.chunk);
    }
  }
  const chunkScore = (c: ChunkRef): number =>
    lists.reduce((sum, l) => {
      const rank = l.chunkRank.get(chunkKey(c));
      return rank === undefined ? sum : sum + 1 / (RRF_K + rank);
    }, 0);
  const out: FusedFile[] = [];
  for (const [path, e] of byPath) {
    const chunk = e.chunks.reduce((best, c) => {
      const d = chunkScore(c) - chunkScore(best);
      return d > 0 || (d === 0 && c.seq < best.seq) ? c : best;
    });
    const types = TYPE_ORDER.filter((t) => e.components.some((c) => c.type === t));
    const score = lists.length === 1 ? (e.components[0] as Component).score : e.fused;
    out.push({ path, blob: chunk.blob, chunk, score, fused: e.fused, types, components: e.components });
  }
  return out.sort((a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
