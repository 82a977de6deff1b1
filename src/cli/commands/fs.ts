// `afs fs …`: the file operations on a workspace's live state. Each subcommand maps the CLI's
// arguments and flags onto one operation's arguments (the operation's schema does the rest) and
// imports that operation only when it runs, so `afs fs ls` never compiles grep, query or zod twice over.
import type { Command } from "commander";
import type { EntryItem } from "../../ops/common.js";
import type { GrepResult } from "../../ops/grep.js";
import type { QueryResult } from "../../ops/query.js";
import type { MutationResult } from "../../volume/volume.js";
import type { Io } from "../context.js";
import { bytes, plural, table } from "../output.js";

/** Registers one subcommand on the `fs` group (its operation already imported). */
type Leaf = (fs: Command, io: Io) => void;

const short = (hash: string | null): string => (hash ? hash.slice(0, 12) : "-");
const wrote = (verb: string, r: MutationResult): string =>
  `${verb} ${r.path} (${bytes(r.size)}, sha256 ${short(r.sha256)})`;

const listing = (items: readonly EntryItem[], io: Io): string[] =>
  table(
    ["KIND", "SIZE", "MODIFIED", "PATH"],
    items.map((i) => [
      i.kind,
      i.kind === "dir" ? "-" : String(i.size),
      io.time(i.modified_at),
      i.kind === "dir" ? `${i.path}/` : i.target !== undefined ? `${i.path} -> ${i.target}` : i.path,
    ]),
  );

function renderQuery(r: QueryResult, _args: unknown, io: Io): string[] {
  // Warnings go to stderr so stdout stays the results.
  for (const w of r.warnings) io.warn(`afs: warning: ${w}\n`);
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

/** The CLI's operation-to-command helper (it loads zod), imported with each operation. */
const opCommand = () => import("../op-command.js");

/**
 * Each subcommand, in help order, loading its operation only when registered: running one loads
 * one operation; help (or a name afs does not know) registers them all.
 */
const FS_COMMANDS: Readonly<Record<string, () => Promise<Leaf>>> = {
  ls: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/list.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "ls",
        summary: "list a directory",
        schema: op.listArgs,
        run: op.list,
        positionals: { path: "path" },
        flags: { "--depth <n>": "depth", "--limit <n>": "limit", "--cursor <cursor>": "cursor" },
        render: (r, _args, io) => {
          // The note goes to stderr so stdout stays the listing.
          if (r.cursor) io.warn(`afs: more entries; continue with --cursor ${r.cursor}\n`);
          return listing(r.items, io);
        },
      });
  },

  // The hottest command of all has its own path that loads no operation schema (and no zod).
  cat: async () => (await import("./fs-cat.js")).registerFsCat,

  lines: async () => {
    const [{ registerOp }, op, { LIMIT_ENV, resolveLimits }] = await Promise.all([
      opCommand(),
      import("../../ops/lines.js"),
      import("../../access/limits.js"),
    ]);
    // Printed as it is read, a window of any size in bounded memory; with --json the answer is one
    // object held whole, so it is capped like a read over any other face (AFS_MAX_READ_BYTES).
    const hint = `or print the lines without --json; ${LIMIT_ENV.maxReadBytes} raises the limit`;
    return (fs, io) =>
      registerOp(fs, io, {
        name: "lines",
        summary: "print lines START to END of a text file (END default: the last line)",
        schema: op.linesArgs,
        run: (volume, args, { io }) =>
          op.lines(volume, args, { maxContentBytes: resolveLimits({}, io.env).maxReadBytes, hint }),
        stream: async (volume, args, io) => {
          // The file's bytes as they are, line endings included; an unterminated last line gets one.
          let last = 0x0a;
          await op.streamLines(volume, args, (bytes) => {
            last = bytes[bytes.length - 1] ?? last;
            return io.writePiece(bytes);
          });
          if (last !== 0x0a) await io.writePiece("\n");
        },
        positionals: { path: "path", start: "start", end: "end" },
        render: (r) => r.content.replace(/\r?\n$/, ""),
      });
  },

  glob: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/glob.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "glob",
        summary: "find entries whose name (or relative path, when PATTERN has a /) matches a glob",
        schema: op.globArgs,
        run: op.glob,
        positionals: { pattern: "pattern" },
        flags: { "--path <dir>": "path", "--kind <kind>": "kind" },
        render: (r) => r.items.map((i) => i.path),
      });
  },

  grep: async () => {
    const [{ registerOp }, op, { grepText }] = await Promise.all([
      opCommand(),
      import("../../ops/grep.js"),
      import("../../ops/grep-text.js"),
    ]);
    const render = (r: GrepResult, _args: unknown, io: Io): string[] => {
      // The note goes to stderr so stdout stays the results.
      if (r.cursor) io.warn(`afs: more results; continue with --cursor ${r.cursor}\n`);
      return grepText(r);
    };
    return (fs, io) =>
      registerOp(fs, io, {
        name: "grep",
        summary: "search text files for lines matching PATTERN (a fixed string unless --regexp or --glob)",
        schema: op.grepArgs,
        run: (volume, args, { indexes }) => op.grep(volume, args, { indexes }),
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
        // People who use grep and rg type -n; every match line carries its number anyway.
        accepted: { "-n, --line-number": "accepted as grep and rg take it; line numbers are always printed" },
        render,
      });
  },

  query: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/query.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "query",
        summary:
          "rank files for a question or concept (keyword BM25, fused with semantic search when embeddings are configured)",
        schema: op.queryArgs,
        run: (volume, args, { indexes }) => op.query(volume, args, { indexes }),
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
  },

  write: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/write.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "write",
        summary: "replace a file's whole content (creating it and its parents)",
        schema: op.writeArgs,
        run: op.write,
        positionals: { path: "path" },
        flags: { "--expected-sha256 <hash>": "expected_sha256" },
        content: "content",
        render: (r) => wrote("wrote", r),
      });
  },

  create: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/create-exclusive.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "create",
        summary: "create a file only if nothing exists at PATH (fails with ALREADY_EXISTS otherwise)",
        schema: op.createExclusiveArgs,
        run: op.createExclusive,
        positionals: { path: "path" },
        content: "content",
        render: (r) => wrote("created", r),
      });
  },

  replace: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/replace.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "replace",
        summary: "replace an exact piece of text (it must match once unless --all or --expected-occurrences)",
        schema: op.replaceArgs,
        run: op.replace,
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
  },

  insert: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/insert.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "insert",
        summary: "insert lines after LINE (0 = at the beginning, -1 = at the end)",
        schema: op.insertArgs,
        run: op.insert,
        positionals: { path: "path", line: "line" },
        flags: { "--expected-sha256 <hash>": "expected_sha256" },
        content: "content",
        render: (r) => `inserted ${plural(r.inserted_lines, "line")} into ${r.path} (sha256 ${short(r.sha256)})`,
      });
  },

  "delete-lines": async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/delete-lines.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "delete-lines",
        summary: "delete lines START to END, inclusive (-1 = the last line)",
        schema: op.deleteLinesArgs,
        run: op.deleteLines,
        positionals: { path: "path", start: "start", end: "end" },
        flags: { "--expected-sha256 <hash>": "expected_sha256" },
        render: (r) => `deleted ${plural(r.deleted_lines, "line")} from ${r.path} (sha256 ${short(r.sha256)})`,
      });
  },

  patch: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/patch.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "patch",
        summary: "apply several edits to one file at once, all or nothing",
        schema: op.patchArgs,
        run: op.patch,
        positionals: { path: "path" },
        flags: { "--patches <json>": "patches", "--expected-sha256 <hash>": "expected_sha256" },
        render: (r) =>
          `applied ${plural(r.patches_applied, "patch", "patches")} to ${r.path} (sha256 ${short(r.sha256)})`,
      });
  },

  rm: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/delete.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "rm",
        summary: "delete a file, symlink or directory",
        schema: op.deleteArgs,
        run: op.remove,
        positionals: { path: "path" },
        flags: { "-r, --recursive": "recursive" },
        render: (r) => `deleted ${r.path}`,
      });
  },

  mkdir: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/mkdir.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "mkdir",
        summary: "create a directory and any missing parents",
        schema: op.mkdirArgs,
        run: op.mkdir,
        positionals: { path: "path" },
        render: (r) => `created directory ${r.path}`,
      });
  },

  mv: async () => {
    const [{ registerOp }, op] = await Promise.all([opCommand(), import("../../ops/rename.js")]);
    return (fs, io) =>
      registerOp(fs, io, {
        name: "mv",
        summary: "move a file, symlink or directory",
        schema: op.renameArgs,
        run: op.rename,
        positionals: { from: "path", to: "new_path" },
        flags: { "--overwrite": "overwrite" },
        render: (_r, args) => `moved ${args.path} to ${args.new_path}`,
      });
  },

  // A file's history (afs.history): its versions, compared, restored, undeleted.
  history: async () => (await import("./fs-history.js")).registerHistory,
  diff: async () => (await import("./fs-history.js")).registerDiff,
  restore: async () => (await import("./fs-history.js")).registerRestore,
  undelete: async () => (await import("./fs-history.js")).registerUndelete,
};

/**
 * The `fs` group: only `sub` when it names a subcommand (the one about to run), else all of them
 * (help, `afs fs help ls`, a typo that commander answers with the list).
 */
export async function fsGroup(sub: string | undefined): Promise<(program: Command, io: Io) => void> {
  const chosen = Object.entries(FS_COMMANDS).filter(
    ([name]) => sub === undefined || !Object.hasOwn(FS_COMMANDS, sub) || name === sub,
  );
  const leaves = await Promise.all(chosen.map(([, load]) => load()));
  return (program, io) => {
    const fs = program.command("fs").description("read and edit files in a workspace's live state");
    for (const leaf of leaves) leaf(fs, io);
  };
}
