// `afs fs …`: the file operations on a workspace's live state. Each entry maps the CLI's
// arguments and flags onto one operation's arguments; the operation's schema does the rest.
import type { Command } from "commander";
import { AfsError } from "../../core/errors.js";
import type { EntryItem } from "../../ops/index.js";
import * as ops from "../../ops/index.js";
import type { MutationResult } from "../../volume/volume.js";
import { registerOp } from "../op-command.js";
import { bytes, plural, shortTime, table } from "../output.js";
import { CAT_SUMMARY } from "./fs-cat.js";

const short = (hash: string | null): string => (hash ? hash.slice(0, 12) : "-");
const wrote = (verb: string, r: MutationResult): string =>
  `${verb} ${r.path} (${bytes(r.size)}, sha256 ${short(r.sha256)})`;

const listing = (items: readonly EntryItem[]): string[] =>
  table(
    ["KIND", "SIZE", "MODIFIED", "PATH"],
    items.map((i) => [
      i.kind,
      i.kind === "dir" ? "-" : String(i.size),
      shortTime(i.modified_at),
      i.kind === "dir" ? `${i.path}/` : i.target !== undefined ? `${i.path} -> ${i.target}` : i.path,
    ]),
  );

function renderGrep(r: ops.GrepResult): string[] {
  // The note goes to stderr so stdout stays the results.
  if (r.cursor) process.stderr.write(`afs: more results; continue with --cursor ${r.cursor}\n`);
  return ops.grepText(r);
}

function renderQuery(r: ops.QueryResult): string[] {
  // Warnings go to stderr so stdout stays the results.
  for (const w of r.warnings) process.stderr.write(`afs: warning: ${w}\n`);
  const explained = new Map((r.explain?.results ?? []).map((e) => [`${e.path}\0${e.chunk_id}`, e]));
  return r.results.flatMap((h) => {
    const e = explained.get(`${h.path}\0${h.chunk_id}`);
    const parts = e?.components.map((c) =>
      c.type === "lex" ? `lex #${c.rank} bm25 ${c.bm25}` : `${c.type} #${c.rank} similarity ${c.similarity}`,
    );
    return [
      `${h.path}:${h.start_line}-${h.end_line}  score ${h.score}  [${h.search_types.join("+")}]`,
      ...h.snippet.split("\n").map((l) => `    ${l}`),
      ...(parts ? [`    (${[...parts, ...(e?.fused_score ? [`fused ${e.fused_score}`] : [])].join(", ")})`] : []),
      "",
    ];
  });
}

export function registerFsCommands(program: Command): void {
  const fs = program.command("fs").description("read and edit files in a workspace's live state");

  registerOp(fs, {
    name: "ls",
    summary: "list a directory",
    schema: ops.listArgs,
    run: ops.list,
    positionals: { path: "path" },
    flags: { "--depth <n>": "depth" },
    render: (r) => listing(r.items),
  });

  registerOp(fs, {
    name: "cat",
    summary: CAT_SUMMARY,
    schema: ops.readArgs,
    run: ops.read,
    positionals: { path: "path" },
    fixed: { encoding: "base64" },
    jsonFixed: {},
    render: (r) => r.content ?? "",
    raw: (r) => {
      if (r.kind === "symlink") {
        throw new AfsError("INVALID_ARGUMENT", `${r.path} is a symlink to ${r.target}; cat the target instead`);
      }
      return Buffer.from(r.content ?? "", "base64");
    },
  });

  registerOp(fs, {
    name: "lines",
    summary: "print lines START to END of a text file (END default: the last line)",
    schema: ops.linesArgs,
    run: ops.lines,
    positionals: { path: "path", start: "start", end: "end" },
    render: (r) => r.content.replace(/\r?\n$/, ""),
  });

  registerOp(fs, {
    name: "glob",
    summary: "find entries whose name (or relative path, when PATTERN has a /) matches a glob",
    schema: ops.globArgs,
    run: ops.glob,
    positionals: { pattern: "pattern" },
    flags: { "--path <dir>": "path", "--kind <kind>": "kind" },
    render: (r) => r.items.map((i) => i.path),
  });

  registerOp(fs, {
    name: "grep",
    summary: "search text files for lines matching PATTERN (a fixed string unless --regexp or --glob)",
    schema: ops.grepArgs,
    run: ops.grep,
    positionals: { pattern: "pattern", path: "path" },
    flags: {
      "-i, --ignore-case": "ignore_case",
      "-F, --fixed-strings": "fixed_strings",
      "-E, --regexp": "regexp",
      "--glob": "glob",
      "-w, --word-regexp": "word_regexp",
      "-x, --line-regexp": "line_regexp",
      "-v, --invert-match": "invert_match",
      "-l, --files-with-matches": "files_with_matches",
      "-c, --count": "count",
      "-m, --max-count <n>": "max_count",
      "-B, --context-before <n>": "context_before",
      "-A, --context-after <n>": "context_after",
      "--include <glob>": "include",
      "--exclude <glob>": "exclude",
      "--limit <n>": "limit",
      "--cursor <cursor>": "cursor",
    },
    render: renderGrep,
  });

  registerOp(fs, {
    name: "query",
    summary:
      "rank files for a question or concept (keyword BM25, fused with semantic search when embeddings are configured)",
    schema: ops.queryArgs,
    run: ops.query,
    positionals: { query: "query", path: "path" },
    flags: {
      "-m, --mode <mode>": "mode",
      "--searches <json>": "searches",
      "--intent <text>": "intent",
      "-n, --limit <n>": "limit",
      "--all": "all",
      "--min-score <score>": "min_score",
      "--candidate-limit <n>": "candidate_limit",
      "--rerank <mode>": "rerank",
      "--explain": "explain",
      "--chunk-strategy <name>": "chunk_strategy",
    },
    render: renderQuery,
  });

  registerOp(fs, {
    name: "write",
    summary: "replace a file's whole content (creating it and its parents)",
    schema: ops.writeArgs,
    run: ops.write,
    positionals: { path: "path" },
    flags: { "--expected-sha256 <hash>": "expected_sha256" },
    content: "content",
    render: (r) => wrote("wrote", r),
  });

  registerOp(fs, {
    name: "create",
    summary: "create a file only if nothing exists at PATH (fails with ALREADY_EXISTS otherwise)",
    schema: ops.createExclusiveArgs,
    run: ops.createExclusive,
    positionals: { path: "path" },
    content: "content",
    render: (r) => wrote("created", r),
  });

  registerOp(fs, {
    name: "replace",
    summary: "replace an exact piece of text (it must match once unless --all or --expected-occurrences)",
    schema: ops.replaceArgs,
    run: ops.replace,
    positionals: { path: "path" },
    flags: {
      "--old <text>": "old",
      "--new <text>": "new",
      "--all": "all",
      "--expected-occurrences <n>": "expected_occurrences",
      "--start-line <n>": "start_line",
      "--context-before <text>": "context_before",
      "--context-after <text>": "context_after",
      "--expected-sha256 <hash>": "expected_sha256",
    },
    render: (r) => `replaced ${plural(r.replacements, "occurrence")} in ${r.path} (sha256 ${short(r.sha256)})`,
  });

  registerOp(fs, {
    name: "insert",
    summary: "insert lines after LINE (0 = at the beginning, -1 = at the end)",
    schema: ops.insertArgs,
    run: ops.insert,
    positionals: { path: "path", line: "line" },
    flags: { "--expected-sha256 <hash>": "expected_sha256" },
    content: "content",
    render: (r) => `inserted ${plural(r.inserted_lines, "line")} into ${r.path} (sha256 ${short(r.sha256)})`,
  });

  registerOp(fs, {
    name: "delete-lines",
    summary: "delete lines START to END, inclusive (-1 = the last line)",
    schema: ops.deleteLinesArgs,
    run: ops.deleteLines,
    positionals: { path: "path", start: "start", end: "end" },
    flags: { "--expected-sha256 <hash>": "expected_sha256" },
    render: (r) => `deleted ${plural(r.deleted_lines, "line")} from ${r.path} (sha256 ${short(r.sha256)})`,
  });

  registerOp(fs, {
    name: "patch",
    summary: "apply several edits to one file at once, all or nothing",
    schema: ops.patchArgs,
    run: ops.patch,
    positionals: { path: "path" },
    flags: { "--patches <json>": "patches", "--expected-sha256 <hash>": "expected_sha256" },
    render: (r) => `applied ${plural(r.patches_applied, "patch", "patches")} to ${r.path} (sha256 ${short(r.sha256)})`,
  });

  registerOp(fs, {
    name: "rm",
    summary: "delete a file, symlink or directory",
    schema: ops.deleteArgs,
    run: ops.remove,
    positionals: { path: "path" },
    flags: { "-r, --recursive": "recursive" },
    render: (r) => `deleted ${r.path}`,
  });

  registerOp(fs, {
    name: "mkdir",
    summary: "create a directory and any missing parents",
    schema: ops.mkdirArgs,
    run: ops.mkdir,
    positionals: { path: "path" },
    render: (r) => `created directory ${r.path}`,
  });

  registerOp(fs, {
    name: "mv",
    summary: "move a file, symlink or directory",
    schema: ops.renameArgs,
    run: ops.rename,
    positionals: { from: "path", to: "new_path" },
    flags: { "--overwrite": "overwrite" },
    render: (_r, args) => `moved ${args.path} to ${args.new_path}`,
  });
}
