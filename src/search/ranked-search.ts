// Running a query plan against a query index: each lex search ranks passages by BM25, each vec or
// hyde search by cosine similarity to its embedded text; every list is collapsed to files and the
// lists are fused (fusion.ts). Vectors missing for passages in scope are computed first, in batches.
import { AfsError, isAfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { EmbeddingProvider } from "./embeddings/provider.js";
import { collapse, type FusedFile, fuse, type PassageHit, type RankedFiles } from "./fusion.js";
import type { PassageStrategy } from "./passages.js";
import type { IndexedFile, QueryIndex } from "./query-index.js";
import type { Search } from "./query-plan.js";
import { parseKeywordQuery, queryWords, STOP_WORDS, tokenize } from "./words.js";

export interface RankedSearchInput {
  index: QueryIndex;
  files: readonly IndexedFile[];
  searches: readonly Search[];
  intent?: string | undefined;
  strategy: PassageStrategy;
  /** Needed when a vec or hyde search runs. */
  provider: EmbeddingProvider | null;
  /** Files each search hands to fusion (Infinity: all that match). */
  candidates: number;
  /**
   * Most passage vectors computed within one query; the rest wait for a later query or `afs index
   * build --embeddings`.
   */
  embedBudget: number;
}

export interface RankedSearchOutput {
  files: FusedFile[];
  lists: RankedFiles[];
  /** Words that point at the best line of a passage, for snippets. */
  words: Set<string>;
  warnings: string[];
}

export const DEFAULT_EMBED_BUDGET = 2000;

/** Ranks one search's files, fetching more passages until enough files are reached. */
type Gather = (i: number, s: Search, fetch: (n: number) => Promise<PassageHit[]>) => Promise<RankedFiles>;

export async function rankedSearch(input: RankedSearchInput): Promise<RankedSearchOutput> {
  const { index, strategy, candidates } = input;
  const paths = new Map<Hash, string[]>();
  for (const f of input.files) {
    const list = paths.get(f.hash);
    if (list) list.push(f.path);
    else paths.set(f.hash, [f.path]);
  }
  for (const list of paths.values()) list.sort();
  const scope: ReadonlySet<Hash> = new Set(paths.keys());
  const pathsOf = (blob: Hash): readonly string[] => paths.get(blob) ?? [];
  const words = new Set<string>();
  const addWords = (text: string): void => {
    for (const t of tokenize(text)) if (!STOP_WORDS.has(t)) words.add(t);
  };
  const warnings: string[] = [];

  /** Fetches more passages until `candidates` files are reached or the index has no more. */
  const gather: Gather = async (i, s, fetch) => {
    const all = !Number.isFinite(candidates);
    for (let n = all ? Number.MAX_SAFE_INTEGER : Math.max(50, candidates * 4); ; n *= 4) {
      const hits = await fetch(n);
      const ranked = collapse(i, s.type, hits, pathsOf, candidates);
      if (all || !ranked.complete || hits.length < n) return ranked;
    }
  };

  const lists: RankedFiles[] = [];
  const vectorSearches: { i: number; s: Search }[] = [];
  for (const [i, s] of input.searches.entries()) {
    if (s.type !== "lex") {
      vectorSearches.push({ i, s });
      continue;
    }
    const q = parseKeywordQuery(s.query);
    if (q.terms.length === 0 && q.phrases.length === 0) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        q.excludes.length > 0
          ? `the keyword search ${JSON.stringify(s.query)} only excludes words; add a word or "phrase" to look for`
          : `the keyword search ${JSON.stringify(s.query)} has no words to look for; use letters or digits`,
      );
    }
    for (const w of queryWords(q)) words.add(w);
    lists.push(
      await gather(i, s, async (n) =>
        (await index.keyword(q, strategy, scope, n)).map((h) => ({ passage: h.passage, score: h.score })),
      ),
    );
  }

  const provider = input.provider;
  if (vectorSearches.length > 0 && provider) {
    try {
      lists.push(...(await vectorLists(input, provider, scope, vectorSearches, gather, warnings)));
      for (const { s } of vectorSearches) addWords(s.query);
    } catch (e) {
      // With keyword rankings in hand, a failing provider (down, over quota) costs only the fusion.
      if (!isAfsError(e) || lists.length === 0) throw e;
      warnings.push(`semantic ranking failed, so results are ranked by keyword only: ${e.message}`);
    }
  }
  addWords(input.intent ?? "");
  lists.sort((a, b) => a.search - b.search);
  return { files: fuse(lists), lists, words, warnings };
}

/** One ranking per vec or hyde search, after embedding the passages in scope that lack vectors. */
async function vectorLists(
  input: RankedSearchInput,
  provider: EmbeddingProvider,
  scope: ReadonlySet<Hash>,
  searches: readonly { i: number; s: Search }[],
  gather: Gather,
  warnings: string[],
): Promise<RankedFiles[]> {
  const { index, strategy } = input;
  const { missing } = await index.embed(provider, strategy, scope, { max: input.embedBudget });
  if (missing > 0) {
    warnings.push(
      `${missing} chunks in scope have no vectors yet (a query embeds at most ${input.embedBudget}), so semantic ranking is partial; run: afs index build --embeddings`,
    );
  }
  const text = (s: Search): string => (input.intent ? `${input.intent}\n\n${s.query}` : s.query);
  // vec texts are questions; hyde texts are passages, embedded like the passages they should
  // resemble.
  const vectors = new Map<number, Float32Array>();
  for (const kind of ["query", "document"] as const) {
    const group = searches.filter(({ s }) => (s.type === "vec") === (kind === "query"));
    if (group.length === 0) continue;
    const out = await provider.embed(
      group.map(({ s }) => text(s)),
      kind,
    );
    for (const [j, { i }] of group.entries()) vectors.set(i, out[j] as Float32Array);
  }
  const lists: RankedFiles[] = [];
  for (const { i, s } of searches) {
    const vector = vectors.get(i) as Float32Array;
    lists.push(
      await gather(i, s, async (n) =>
        (await index.nearest(provider, vector, strategy, scope, n)).map((h) => ({
          passage: h.passage,
          score: h.similarity,
        })),
      ),
    );
  }
  return lists;
}
