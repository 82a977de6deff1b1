// File read tools: read, lines, list, glob, grep, query. Arguments are the operations' own schemas
// plus `workspace`; results are capped by the session's limits.
import { z } from "zod";
import { capResults, checkRangeRead, checkWholeRead } from "../../../access/limits.js";
import * as ops from "../../../ops/index.js";
import type { Stat } from "../../../volume/volume.js";
import { entryItem } from "../schemas.js";
import { defineTool, onWorkspaceAt, READ, type Tool } from "../tool.js";
import { openVolume, searchIndexes } from "./volume.js";

const readOutput = z.object({
  workspace: z.string(),
  path: z.string(),
  kind: z.enum(["file", "symlink"]),
  size: z.number(),
  sha256: z.string(),
  content: z.string().optional(),
  encoding: z.enum(["text", "base64"]).optional(),
  binary: z.boolean().optional(),
  target: z.string().optional(),
});

const linesOutput = z.object({
  path: z.string(),
  start: z.number(),
  end: z.number(),
  total_lines: z.number(),
  content: z.string(),
  sha256: z.string(),
  note: z.string().optional(),
});

const truncated = z.boolean().describe("True when more entries matched than the result holds; narrow the request.");

const listOutput = z.object({
  path: z.string(),
  items: z.array(entryItem),
  truncated,
  cursor: z
    .string()
    .optional()
    .describe("Present when truncated: pass it as cursor, with the same path and depth, for the next page."),
});
const globOutput = z.object({
  count: z.number().describe("How many entries matched in all (items may hold fewer)."),
  items: z.array(entryItem),
  truncated,
});

const grepPage = {
  truncated,
  cursor: z
    .string()
    .optional()
    .describe("Present when truncated: pass it as cursor, with the same other arguments, for the next page."),
};
const grepOutput = z.discriminatedUnion("mode", [
  z.object({
    mode: z.literal("matches"),
    matches: z.array(
      z.object({
        path: z.string(),
        line: z.number(),
        text: z.string(),
        before: z.array(z.string()).optional().describe("context_before lines, oldest first, ending at line - 1."),
        after: z.array(z.string()).optional().describe("context_after lines, starting at line + 1."),
      }),
    ),
    ...grepPage,
  }),
  z.object({ mode: z.literal("files"), files: z.array(z.string()), ...grepPage }),
  z.object({
    mode: z.literal("counts"),
    counts: z.array(z.object({ path: z.string(), count: z.number() })),
    ...grepPage,
  }),
]);

const searchType = z.enum(["lex", "vec", "hyde"]);
const queryOutput = z.object({
  status: z
    .enum(["ok", "unavailable"])
    .describe('"unavailable": semantic search was asked for and no embedding provider is configured (see warnings).'),
  results: z.array(
    z.object({
      path: z.string(),
      chunk_id: z.string(),
      start_line: z.number(),
      end_line: z.number(),
      score: z.number(),
      snippet: z.string(),
      search_types: z.array(searchType),
    }),
  ),
  warnings: z.array(z.string()),
  explain: z
    .object({
      mode: z.enum(["query", "keyword", "semantic"]),
      fusion: z.enum(["none", "rrf"]),
      rrf_k: z.number().optional(),
      rerank: z.literal("none"),
      searches: z.array(z.object({ type: searchType, query: z.string(), candidates: z.number() })),
      results: z.array(
        z.object({
          path: z.string(),
          chunk_id: z.string(),
          fused_score: z.number().optional(),
          components: z.array(
            z.object({
              search: z.number(),
              type: searchType,
              rank: z.number(),
              bm25: z.number().optional(),
              similarity: z.number().optional(),
            }),
          ),
        }),
      ),
    })
    .optional(),
});

const listing = (items: readonly ops.EntryItem[]): string =>
  items
    .map(
      (i) => `${i.kind.padEnd(7)} ${i.kind === "dir" ? `${i.path}/` : i.target ? `${i.path} -> ${i.target}` : i.path}`,
    )
    .join("\n");
const more = (cut: boolean): string => (cut ? "\n(truncated: more results than shown; narrow the request)" : "");

export const fileReadTools: readonly Tool[] = [
  defineTool({
    name: "file_read",
    title: "Read a file",
    family: "file-read",
    description:
      "Read a whole file (or a symlink's target text) from the workspace's live state, or from a checkpoint with checkpoint. Returns the content and its sha256, which you can pass as expected_sha256 to an edit. For part of a large file use file_lines; to find files use file_list or file_glob; to search contents use file_grep or file_query.",
    input: onWorkspaceAt(ops.readArgs),
    output: readOutput,
    annotations: READ,
    async run(ctx, input) {
      const { workspace, volume, args } = await openVolume(ctx, input);
      const check = (stat: Stat) => checkWholeRead(ctx.limits, stat.path, stat.size, "file_lines with start and end");
      return { workspace, ...(await ops.read(volume, args, { check })) };
    },
    text: (r) => {
      const head = `[${r.path}: ${r.kind}, ${r.size} bytes, sha256 ${r.sha256}]`;
      if (r.kind === "symlink") return `${head}\nsymlink to ${r.target ?? ""}`;
      if (r.content === undefined) return `${head}\nbinary file; read it with encoding "base64"`;
      return `${head}\n${r.content}`;
    },
  }),

  defineTool({
    name: "file_lines",
    title: "Read lines of a file",
    family: "file-read",
    description:
      "Read lines start..end (1-based, inclusive; end -1 or omitted = end of file) of a text file. Use it for large files and to look at the place you are about to edit. Returns total_lines and the whole file's sha256.",
    input: onWorkspaceAt(ops.linesArgs),
    output: linesOutput,
    annotations: READ,
    async run(ctx, input) {
      const { volume, args } = await openVolume(ctx, input);
      const result = await ops.lines(volume, args, { maxContentBytes: ctx.limits.maxReadBytes });
      checkRangeRead(ctx.limits, result.path, Buffer.byteLength(result.content));
      return result;
    },
    text: (r) =>
      `[${r.path}: lines ${r.start}-${r.end} of ${r.total_lines}, sha256 ${r.sha256}]${r.note ? ` ${r.note}` : ""}\n${r.content}`,
  }),

  defineTool({
    name: "file_list",
    title: "List a directory",
    family: "file-read",
    description:
      "List the entries of a directory (depth 1 by default; more levels with depth), directories first, then by name. Each item has path, name, kind (file, dir, symlink), size and modified_at. A large directory comes a page at a time: page with limit and cursor. With checkpoint, lists that checkpoint instead of the live state.",
    input: onWorkspaceAt(ops.listArgs),
    output: listOutput,
    annotations: READ,
    async run(ctx, input) {
      const { volume, args } = await openVolume(ctx, input);
      // The session's result cap is the most one page may hold; the cursor pages on past it.
      const limit = Math.min(args.limit ?? ctx.limits.maxResults, ctx.limits.maxResults);
      const { path, items, cursor } = await ops.list(volume, { ...args, limit });
      return { path, items, truncated: cursor !== undefined, ...(cursor ? { cursor } : {}) };
    },
    text: (r) =>
      (r.items.length === 0 ? `${r.path} is empty` : listing(r.items)) +
      (r.cursor
        ? `\n(truncated: more entries than shown; pass cursor ${JSON.stringify(r.cursor)} with the same arguments for the next page)`
        : ""),
  }),

  defineTool({
    name: "file_glob",
    title: "Find files by name",
    family: "file-read",
    description:
      'Find files (or directories with kind "dir") whose name matches a glob such as "*.go", recursively below path; a pattern with a "/" matches the whole relative path instead ("src/**/*.test.ts"). Hidden files are included. Use it to discover files by name, not to search contents.',
    input: onWorkspaceAt(ops.globArgs),
    output: globOutput,
    annotations: READ,
    async run(ctx, input) {
      const { volume, args } = await openVolume(ctx, input);
      const result = await ops.glob(volume, args);
      return { count: result.count, ...capResults(ctx.limits, result.items) };
    },
    text: (r) => (r.count === 0 ? "no entries match" : r.items.map((i) => i.path).join("\n")) + more(r.truncated),
  }),

  defineTool({
    name: "file_grep",
    title: "Search file contents",
    family: "file-read",
    description:
      "Search text files for lines matching a pattern: a fixed string by default, or a glob or RE2 regexp. Returns matching lines (path, line, text, with before/after lines on request), or only file paths (files_with_matches), or counts per file (count), in path then line order. Narrow with include/exclude globs; page with limit and cursor. Use it when you know the exact text; for a concept use file_query.",
    input: onWorkspaceAt(ops.grepArgs),
    output: grepOutput,
    annotations: READ,
    async run(ctx, input) {
      const { volume, args } = await openVolume(ctx, input);
      // The session's result cap is the most one page may hold; the cursor pages on past it.
      const limit = Math.min(args.limit ?? ctx.limits.maxResults, ctx.limits.maxResults);
      const { truncated, cursor, ...result } = await ops.grep(
        volume,
        { ...args, limit },
        { indexes: searchIndexes(ctx) },
      );
      return { ...result, truncated: truncated === true, ...(cursor ? { cursor } : {}) };
    },
    text: (r) => {
      const lines = ops.grepText(r);
      const next = r.cursor
        ? `\n(truncated: more results than shown; pass cursor ${JSON.stringify(r.cursor)} with the same arguments for the next page)`
        : more(r.truncated);
      return (lines.length === 0 ? "no matches" : lines.join("\n")) + next;
    },
  }),

  defineTool({
    name: "file_query",
    title: "Ranked search",
    family: "file-read",
    description:
      'Find the places most relevant to a question or concept when you do not know the exact text. Ranks files (one result each: its best chunk, with path, start_line, end_line, score, snippet) by keyword relevance (BM25) fused with semantic similarity when an embedding provider is configured. Plain text works; a typed query document sharpens it: one clause per line, lex: (exact words, "phrases", -excluded), vec: (a question), hyde: (a passage that would answer it), intent: (what it is for). Follow up with file_lines on a result. For exact text use file_grep.',
    input: onWorkspaceAt(ops.queryArgs),
    output: queryOutput,
    annotations: READ,
    async run(ctx, input) {
      const { volume, args } = await openVolume(ctx, input);
      return ops.query(volume, args, { maxResults: ctx.limits.maxResults, indexes: searchIndexes(ctx) });
    },
    text: (r) => {
      const notes = r.warnings.map((w) => `warning: ${w}`);
      if (r.status === "unavailable") return notes.join("\n");
      const hits = r.results.map(
        (h) => `${h.path}:${h.start_line}-${h.end_line} (score ${h.score}, ${h.search_types.join("+")})\n${h.snippet}`,
      );
      return [...notes, hits.length === 0 ? "no results" : hits.join("\n\n")].join("\n");
    },
  }),
];
