// Keyword-ranked search over a volume: BM25 over fixed line chunks of every text file (the path
// counts as part of each chunk). No protocol imports, so it can move into ops/ as it is.
import { z } from "zod";
import { AfsError, isAfsError } from "../../core/errors.js";
import { normalizePath } from "../../core/paths.js";
import { decodeText } from "../../core/text.js";
import { dirPathArg } from "../../ops/args.js";
import type { Volume } from "../../volume/volume.js";

export const queryArgs = z.strictObject({
  path: dirPathArg.describe('File or directory to search within, recursively (default "/").'),
  query: z
    .string()
    .min(1)
    .describe(
      'What you are looking for, in plain words or identifiers (e.g. "where is the retry backoff computed"). Ranked by keyword relevance (BM25): words that are rare in the workspace weigh most.',
    ),
  limit: z.number().int().min(1).optional().describe("Most results to return (default 10)."),
  min_score: z.number().min(0).optional().describe("Leave out results scoring below this (default 0)."),
});
export type QueryArgs = z.infer<typeof queryArgs>;

export interface QueryHit {
  path: string;
  /** First and last line (1-based) of the chunk that holds query words. */
  start_line: number;
  end_line: number;
  score: number;
  /** The best-matching line of the chunk with its neighbours. */
  snippet: string;
}

export interface QueryResult {
  results: QueryHit[];
  /** True when more results scored above min_score than limit let through. */
  truncated: boolean;
}

export interface QueryOptions {
  /** Files larger than this are not read (they would dominate memory and time). */
  maxFileBytes: number;
}

const CHUNK_LINES = 20;
const SNIPPET_CHARS = 400;
// Standard BM25 constants (Robertson et al.): term-frequency saturation and length normalization.
const K1 = 1.2;
const B = 0.75;
const STOP_WORDS = new Set(
  "a an and are as at be by can do does for from how i in is it of on or the this to what when where which who why with".split(
    " ",
  ),
);

/** Lowercase word parts: identifiers split at camelCase and underscores, so parseConfig ≈ "parse config". */
export function tokenize(text: string): string[] {
  const split = text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2");
  return split.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

interface Chunk {
  path: string;
  start: number;
  lines: string[];
  length: number;
  /** Occurrences of each query term. */
  tf: Map<string, number>;
}

export async function query(volume: Volume, args: QueryArgs, options: QueryOptions): Promise<QueryResult> {
  const root = normalizePath(args.path ?? "/");
  const terms = [...new Set(tokenize(args.query))];
  const meaningful = terms.filter((t) => !STOP_WORDS.has(t));
  const wanted = new Set(meaningful.length > 0 ? meaningful : terms);
  if (wanted.size === 0) {
    throw new AfsError("INVALID_ARGUMENT", "query has no words to search for; use letters or digits");
  }

  let chunks = 0;
  let totalLength = 0;
  const df = new Map<string, number>();
  const candidates: Chunk[] = [];
  for (const path of await textFiles(volume, root, options.maxFileBytes)) {
    const text = await readSearchable(volume, path);
    if (text === null || text === "") continue;
    const pathTokens = tokenize(path);
    const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
    if (lines[lines.length - 1] === "") lines.pop();
    for (let start = 0; start < lines.length; start += CHUNK_LINES) {
      const slice = lines.slice(start, start + CHUNK_LINES);
      const tokens = [...pathTokens, ...slice.flatMap(tokenize)];
      chunks++;
      totalLength += tokens.length;
      const tf = new Map<string, number>();
      for (const t of tokens) if (wanted.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      if (tf.size === 0) continue;
      for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
      candidates.push({ path, start: start + 1, lines: slice, length: tokens.length, tf });
    }
  }

  const avgLength = chunks > 0 ? totalLength / chunks : 1;
  const idf = (t: string): number => {
    const n = df.get(t) ?? 0;
    return Math.log(1 + (chunks - n + 0.5) / (n + 0.5));
  };
  const minScore = args.min_score ?? 0;
  const scored = candidates
    .map((c) => ({ chunk: c, score: bm25(c, idf, avgLength) }))
    .filter((s) => s.score > 0 && s.score >= minScore)
    .sort((a, b) => b.score - a.score || compare(a.chunk.path, b.chunk.path) || a.chunk.start - b.chunk.start);
  const limit = args.limit ?? 10;
  return {
    results: scored.slice(0, limit).map((s) => hit(s.chunk, s.score, wanted)),
    truncated: scored.length > limit,
  };
}

function bm25(c: Chunk, idf: (t: string) => number, avgLength: number): number {
  let score = 0;
  for (const [t, f] of c.tf) score += (idf(t) * f * (K1 + 1)) / (f + K1 * (1 - B + (B * c.length) / avgLength));
  return score;
}

/** Narrows the chunk to its lines holding query words and picks the best one for the snippet. */
function hit(c: Chunk, score: number, wanted: ReadonlySet<string>): QueryHit {
  const hits = c.lines.map((line) => new Set(tokenize(line).filter((t) => wanted.has(t))).size);
  const matching = hits.flatMap((n, i) => (n > 0 ? [i] : []));
  // A chunk may match only through its path: then show its first lines.
  const first = matching[0] ?? 0;
  const last = matching[matching.length - 1] ?? Math.min(c.lines.length, 3) - 1;
  const best = hits.reduce((bi, n, i) => (n > (hits[bi] ?? 0) ? i : bi), first);
  const around = c.lines.slice(Math.max(0, best - 1), best + 2).join("\n");
  return {
    path: c.path,
    start_line: c.start + first,
    end_line: c.start + last,
    score: Math.round(score * 10_000) / 10_000,
    snippet: around.length > SNIPPET_CHARS ? `${around.slice(0, SNIPPET_CHARS)}…` : around,
  };
}

/** A file's text, or null to skip it: binary, or gone or turned into a directory since the walk. */
async function readSearchable(volume: Volume, path: string): Promise<string | null> {
  try {
    return decodeText(await volume.readFile(path));
  } catch (e) {
    if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
    throw e;
  }
}

async function textFiles(volume: Volume, root: string, maxBytes: number): Promise<string[]> {
  const stat = await volume.stat(root);
  if (!stat)
    throw new AfsError("NOT_FOUND", `${root} does not exist; use file_list to see what is there`, { path: root });
  if (stat.kind !== "dir") return stat.size <= maxBytes ? [root] : [];
  const files: string[] = [];
  for await (const s of volume.walk(root)) if (s.kind === "file" && s.size <= maxBytes) files.push(s.path);
  return files.sort(compare);
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
