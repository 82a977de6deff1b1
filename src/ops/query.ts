// query: ranked search for a concept or question over the files below a path. Keyword (BM25 over
// passages), semantic (embedding similarity) or both fused; the home's query index (indexes.query)
// does the work when given, else the files are split and ranked on the spot (keyword only).
import { z } from "zod";
import type { EmbeddingProvider } from "../search/embeddings/provider.js";
import { RRF_K } from "../search/fusion.js";
import type { SearchIndexes } from "../search/indexes.js";
import { PASSAGE_STRATEGIES } from "../search/passages.js";
import type { QueryIndex, ScopeFile } from "../search/query-index.js";
import { planQuery, type SearchType } from "../search/query-plan.js";
import { DEFAULT_EMBED_BUDGET, rankedSearch } from "../search/ranked-search.js";
import { ScanIndex } from "../search/scan-index.js";
import { snippet } from "../search/snippet.js";
import type { Volume } from "../volume/volume.js";
import { dirPathArg } from "./args.js";
import { mustStat, normalizePath } from "./common.js";

const searchType = z.enum(["lex", "vec", "hyde"]);

export const queryArgs = z.strictObject({
  path: dirPathArg.describe('File or directory to search within, recursively (default "/").'),
  query: z
    .string()
    .optional()
    .describe(
      'What you are looking for: plain words or a question ("where is the retry backoff computed"), or a typed query document with one clause per line: "lex: exact words", "vec: a question in natural language", "hyde: a passage that would answer it", "intent: what the search is for". Keyword syntax: "quoted phrases", -word excludes. Required unless searches is given.',
    ),
  mode: z
    .enum(["query", "keyword", "semantic"])
    .optional()
    .describe(
      "query (default): keyword and semantic rankings fused (keyword only when no embedding provider is configured); keyword: BM25 only; semantic: embedding similarity only.",
    ),
  searches: z
    .array(z.strictObject({ type: searchType, query: z.string().min(1) }))
    .optional()
    .describe("Searches to run and fuse, instead of or besides query: lex = keyword, vec = question, hyde = passage."),
  intent: z
    .string()
    .optional()
    .describe("What the search is for; steers semantic search and which lines the snippets show."),
  limit: z.number().int().min(1).optional().describe("Most results to return (default 10); one result per file."),
  all: z.boolean().optional().describe("Return every file that matches, not only the first limit."),
  min_score: z
    .number()
    .optional()
    .describe(
      "Leave out results scoring below this (default 0). Scores are BM25 (keyword), cosine similarity (semantic), or the reciprocal-rank-fusion sum when several searches are fused.",
    ),
  candidate_limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Files each search hands to fusion (default max(limit, 50)); larger finds more agreement, slower. With a single search it caps the results.",
    ),
  rerank: z
    .enum(["auto", "none"])
    .optional()
    .describe("auto (default) or none. No reranking model ships with afs, so both keep the fused order."),
  explain: z.boolean().optional().describe("Include each result's component scores (rank and score per search)."),
  chunk_strategy: z
    .enum(PASSAGE_STRATEGIES)
    .optional()
    .describe(
      "auto (default): chunks follow structure (Markdown sections, top-level definitions, blank-line blocks; at most 120 lines / 8 KiB). regex: plain windows of about 40 lines.",
    ),
});
export type QueryArgs = z.infer<typeof queryArgs>;

export interface QueryHit {
  path: string;
  /** The passage within the file's content: first 12 hex digits of the content hash, #, its position. */
  chunk_id: string;
  start_line: number;
  end_line: number;
  score: number;
  snippet: string;
  /** The kinds of search that found this file. */
  search_types: SearchType[];
}

export interface QueryExplain {
  mode: "query" | "keyword" | "semantic";
  fusion: "none" | "rrf";
  rrf_k?: number;
  rerank: "none";
  searches: { type: SearchType; query: string; candidates: number }[];
  results: {
    path: string;
    chunk_id: string;
    /** Only when several searches were fused. */
    fused_score?: number;
    components: { search: number; type: SearchType; rank: number; bm25?: number; similarity?: number }[];
  }[];
}

export interface QueryResult {
  /** "unavailable": a semantic search was asked for and no embedding provider is configured. */
  status: "ok" | "unavailable";
  results: QueryHit[];
  warnings: string[];
  explain?: QueryExplain;
}

export interface QueryOptions {
  /** Most results one call returns whatever limit or all ask (the caller's result cap). */
  maxResults?: number;
  /** Most passage vectors one query computes. */
  embedBudget?: number;
  /** The home's indexes; query uses `query`, keyed by the content hashes the volume reports. */
  indexes?: SearchIndexes;
}

/** Six significant digits: BM25 of a word in most passages is tiny but still orders results. */
const round = (n: number): number => Number(n.toPrecision(6));

export async function query(volume: Volume, args: QueryArgs, options: QueryOptions = {}): Promise<QueryResult> {
  const mode = args.mode ?? "query";
  const plan = planQuery({ query: args.query, searches: args.searches, intent: args.intent, mode });
  const warnings = [...plan.warnings];
  // Only an explicit request hears that there is no reranker; the default stays quiet.
  if (args.rerank === "auto")
    warnings.push("rerank auto: no reranking model is available, so results are not reranked");
  const strategy = args.chunk_strategy ?? "auto";
  const scope = await scopeFiles(volume, normalizePath(args.path ?? "/"));
  const index: QueryIndex = options.indexes?.query ?? new ScanIndex(volume);

  let searches = plan.searches;
  let provider: EmbeddingProvider | null = null;
  if (searches.some((s) => s.type !== "lex")) {
    const embedder = await index.embedder();
    if (embedder.provider) provider = embedder.provider;
    else {
      searches = searches.filter((s) => s.type === "lex");
      if (searches.length === 0)
        return { status: "unavailable", results: [], warnings: [...warnings, embedder.message] };
      warnings.push(`ranked by keyword only: ${embedder.message}`);
    }
  }

  const wanted = args.limit ?? 10;
  const asked = args.all ? Number.POSITIVE_INFINITY : wanted;
  const limit = Math.min(asked, options.maxResults ?? Number.POSITIVE_INFINITY);
  // One search needs no more candidates than results; fusion looks deeper for agreement.
  const candidates = args.all
    ? Number.POSITIVE_INFINITY
    : searches.length === 1
      ? (args.candidate_limit ?? wanted)
      : Math.max(args.candidate_limit ?? 50, wanted);
  const files = await index.prepare(scope, strategy);
  const ranked = await rankedSearch({
    index,
    files,
    searches,
    intent: plan.intent,
    strategy,
    provider,
    candidates,
    embedBudget: options.embedBudget ?? DEFAULT_EMBED_BUDGET,
  });
  warnings.push(...ranked.warnings);

  const minScore = args.min_score ?? 0;
  const passing = ranked.files.filter((f) => f.score >= minScore);
  if (passing.length > limit && asked > limit) {
    warnings.push(`${passing.length} results matched; only the first ${limit} are returned (the result cap)`);
  }
  const chosen = passing.slice(0, limit);
  const results: QueryHit[] = [];
  for (const f of chosen) {
    const text = await index.text({ path: f.path, hash: f.blob });
    results.push({
      path: f.path,
      chunk_id: passageId(f.blob, f.passage.seq),
      start_line: f.passage.start_line,
      end_line: f.passage.end_line,
      score: round(f.score),
      snippet: text === null ? "" : snippet(text, f.passage.start_line, f.passage.end_line, ranked.words),
      search_types: f.types,
    });
  }
  const result: QueryResult = { status: "ok", results, warnings };
  if (args.explain) {
    result.explain = {
      mode,
      fusion: ranked.lists.length > 1 ? "rrf" : "none",
      ...(ranked.lists.length > 1 ? { rrf_k: RRF_K } : {}),
      rerank: "none",
      searches: searches.map((s, i) => ({
        type: s.type,
        query: s.query,
        candidates: ranked.lists.find((l) => l.search === i)?.files.length ?? 0,
      })),
      results: chosen.map((f) => ({
        path: f.path,
        chunk_id: passageId(f.blob, f.passage.seq),
        ...(ranked.lists.length > 1 ? { fused_score: round(f.fused) } : {}),
        components: f.components.map((c) => ({
          search: c.search,
          type: c.type,
          rank: c.rank,
          ...(c.type === "lex" ? { bm25: round(c.score) } : { similarity: round(c.score) }),
        })),
      })),
    };
  }
  return result;
}

const passageId = (blob: string, seq: number): string => `${blob.slice(0, 12)}#${seq}`;

/** The files a query covers: the path itself when it is a file, else every regular file below it. */
async function scopeFiles(volume: Volume, root: string): Promise<ScopeFile[]> {
  const stat = await mustStat(volume, root);
  if (stat.kind === "file") return [{ path: stat.path, size: stat.size, hash: stat.sha256 }];
  if (stat.kind !== "dir") return [];
  const files: ScopeFile[] = [];
  for await (const s of volume.walk(root)) {
    if (s.kind === "file")
      files.push(s.sha256 ? { path: s.path, size: s.size, hash: s.sha256 } : { path: s.path, size: s.size });
  }
  return files;
}
