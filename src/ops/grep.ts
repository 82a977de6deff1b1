// grep: lines matching a pattern in one file or every text file below a directory. Given a content
// index (indexes.text), only the files whose text holds the pattern's required literals are read.
import { z } from "zod";
import { AfsError, isAfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { turns } from "../core/turns.js";
import type { SearchIndexes } from "../search/indexes.js";
import type { TextIndex } from "../search/text-index.js";
import type { Stat, Volume } from "../volume/volume.js";
import { dirPathArg } from "./args.js";
import { byString, mustStat, normalizePath } from "./common.js";
import { selectInRuns, selectInView, type ViewOptions } from "./grep-bytes.js";
import { WindowedCounts } from "./grep-count.js";
import { decodeCursor, encodeCursor, type GrepCursor, searchFingerprint } from "./grep-cursor.js";
import { type SelectedLine, scanPlan, selectLines } from "./grep-scan.js";
import { pathFilter } from "./path-glob.js";
import type { PatternMode } from "./regex.js";

const globList = z.union([z.string().min(1), z.array(z.string().min(1))]).optional();
const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : typeof v === "string" ? [v] : v);

const contextArg = z.number().int().min(0).max(1000).optional();

export const grepArgs = z.strictObject({
  path: dirPathArg.describe(
    'File to search, or directory to search recursively (default "/"). Binary files are skipped.',
  ),
  pattern: z
    .string()
    .min(1)
    .describe("What to look for. By default a fixed string (no special characters); see glob and regexp."),
  fixed_strings: z.boolean().optional().describe("Treat pattern as a literal string. This is the default."),
  glob: z
    .boolean()
    .optional()
    .describe(
      'Treat pattern as a glob matched against the whole line: * any characters, ? one character, [abc] a class, {a,b} alternatives. Use "*TODO*" to find TODO anywhere in a line.',
    ),
  regexp: z
    .boolean()
    .optional()
    .describe(
      "Treat pattern as an RE2 regular expression (Go/RE2 syntax: no backreferences or lookaround), searched within each line.",
    ),
  ignore_case: z.boolean().optional().describe("Match letters case-insensitively."),
  word_regexp: z
    .boolean()
    .optional()
    .describe("Only match whole words: the match may not touch a letter, digit or underscore on either side."),
  line_regexp: z.boolean().optional().describe("Only match when the pattern matches the entire line."),
  invert_match: z.boolean().optional().describe("Select the lines that do NOT match."),
  files_with_matches: z
    .boolean()
    .optional()
    .describe("Return only the paths of files with at least one selected line, not the lines."),
  count: z
    .boolean()
    .optional()
    .describe("Return the number of selected lines per file (files with none are left out)."),
  max_count: z.number().int().min(1).optional().describe("Stop reading a file after this many selected lines."),
  context_before: contextArg.describe(
    "Also return this many lines before each selected line, as `before` (oldest first; fewer at the start of a file).",
  ),
  context_after: contextArg.describe(
    "Also return this many lines after each selected line, as `after` (fewer at the end of a file).",
  ),
  include: globList.describe(
    'Only search files matching one of these globs (a string or a list). A glob with a "/" matches the path relative to `path` ("src/**/*.ts"); one without matches the file name ("*.go").',
  ),
  exclude: globList.describe(
    'Skip files matching any of these globs (a string or a list). A glob without a "/" also skips directories of that name ("node_modules"); one with a "/" matches the path relative to `path` ("docs/**").',
  ),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Most results to return in all (lines, or files, or counts). When more exist the result says truncated: true and carries a cursor for the next page.",
    ),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The cursor of a truncated result: returns the next page. Repeat every other argument unchanged (limit may differ).",
    ),
});
export type GrepArgs = z.infer<typeof grepArgs>;

export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  /** The line without its line ending. */
  text: string;
  /** With context_before: the lines just before, oldest first (line - before.length … line - 1). */
  before?: string[];
  /** With context_after: the lines just after (line + 1 …). */
  after?: string[];
}

/** What grep found, in one of its three output modes. */
export type GrepItems =
  | { mode: "matches"; matches: GrepMatch[] }
  | { mode: "files"; files: string[] }
  | { mode: "counts"; counts: { path: string; count: number }[] };

export type GrepResult = GrepItems & {
  /** Present (true) when more results exist than `limit` let through; `cursor` continues. */
  truncated?: true;
  cursor?: string;
};

/** A file to search: its path, and its content hash when the volume knows it without reading. */
type Target = Pick<Stat, "path" | "sha256">;

export interface GrepOptions {
  /** The home's indexes; grep uses `text` for the files whose content hash the volume reports. */
  indexes?: SearchIndexes;
}

export async function grep(volume: Volume, args: GrepArgs, options: GrepOptions = {}): Promise<GrepResult> {
  const path = normalizePath(args.path ?? "/");
  const modes = (["fixed_strings", "glob", "regexp"] as const).filter((m) => args[m]);
  if (modes.length > 1) {
    throw new AfsError("INVALID_ARGUMENT", `choose one of ${modes.join(", ")}; they are different pattern syntaxes`);
  }
  if (args.files_with_matches && args.count) {
    throw new AfsError("INVALID_ARGUMENT", "choose files_with_matches or count, not both");
  }
  if (args.glob && args.word_regexp) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      'word_regexp does not apply to glob, which always matches the whole line; write the word boundaries into the glob (e.g. "* name *") or use regexp',
    );
  }
  const mode: PatternMode = args.regexp ? "regexp" : args.glob ? "glob" : "fixed";
  const plan = scanPlan({
    pattern: args.pattern,
    mode,
    ignoreCase: args.ignore_case,
    word: args.word_regexp,
    line: args.line_regexp,
  });
  const invert = args.invert_match === true;
  const output = args.files_with_matches ? "files" : args.count ? "counts" : "matches";
  const fingerprint = searchFingerprint({ ...args, limit: undefined, cursor: undefined });
  const from = args.cursor ? decodeCursor(args.cursor, fingerprint) : null;
  const limit = args.limit ?? Number.POSITIVE_INFINITY;
  const maxCount = args.max_count ?? Number.POSITIVE_INFINITY;

  const index = options.indexes?.text;
  index?.beginSearch?.();
  let targets: Target[];
  let candidates: Map<Hash, readonly number[] | null> | null = null;
  // A directory that lists as a stored tree whose map of contents to paths the index holds: the
  // candidates' paths come from the index, and the tree is not listed (a new process listing a 1M-file
  // tree took seconds to find a handful of files).
  const base = index && !invert ? await storedBase(volume, path) : null;
  let mapped = base && index?.treeCandidates ? await index.treeCandidates(base.tree, plan.query) : null;
  // No map of the tree (a checkpoint moved the head since one was written, or a subdirectory is
  // searched): a map of an earlier checkpoint's tree, or of a tree above `path`, serves, with what
  // changed since then read live.
  const prior = base && !mapped && index ? await priorBase(volume, path, index) : null;
  if (prior && index?.treeCandidates) mapped = await index.treeCandidates(prior.tree, plan.query);
  const scope = mapped ? null : await searchScope(volume, path, args.include, args.exclude);
  if (index && base && mapped) {
    const filter = pathFilter(asList(args.include), asList(args.exclude));
    const prefix = path === "/" ? "/" : `${path}/`;
    const changed = topmost((prior ?? base).changed.map((c) => c.slice(prefix.length)));
    candidates = mapped.candidates;
    targets = [];
    // The map may be of a tree above `path` (prior.under: where `path` is in it): only its files below count.
    const under = prior?.under ? `${prior.under}/` : "";
    for (const f of mapped.files) {
      if (!f.path.startsWith(under)) continue;
      const rel = f.path.slice(under.length);
      if ((!filter || filter(rel)) && !within(rel, changed)) targets.push({ path: prefix + rel, sha256: f.hash });
    }
    // What changed since the tree was stored is read live: few files, looked up in the index.
    const live = scopeOf(
      (
        await liveFiles(
          volume,
          [...changed].map((c) => prefix + c),
        )
      ).filter((t) => !filter || filter(t.path.slice(prefix.length))),
    );
    targets.push(...live.unhashed);
    if (live.hashes.length > 0) {
      for (const [hash, blocks] of await index.candidates(live.hashes, plan.query)) {
        candidates.set(hash, blocks);
        for (const t of live.byHash.get(hash) ?? []) targets.push(t);
      }
    }
  } else if (index && scope && scope.hashes.length > 0) {
    // Asked even when the pattern requires nothing: the answer still leaves binary blobs out, and
    // the index then knows every blob, so their texts come as byte views rather than decoded.
    candidates = await index.candidates(scope.hashes, invert ? { op: "all" } : plan.query);
    // Targets with a known hash are narrowed by the index; the others (files a volume
    // knows no hash for, as in a directory) are all read. Only the candidates' paths are visited.
    targets = [...scope.unhashed];
    for (const hash of candidates.keys()) for (const t of scope.byHash.get(hash) ?? []) targets.push(t);
    // The whole tree was listed, and its contents are now looked up: record its map for the next
    // search (nothing when some content is not indexed yet, or it is recorded already).
    const unfiltered = asList(args.include).length === 0 && asList(args.exclude).length === 0;
    if (base && base.changed.length === 0 && unfiltered) await recordTree(index, base.tree, path, scope);
  } else targets = [...(scope?.targets ?? [])];
  if (from) targets = targets.filter((t) => t.path >= from.path && !(t.path === from.path && from.line === null));
  // Sorted after the index has narrowed them: usually far fewer than were walked.
  targets.sort((a, b) => byString(a.path, b.path));

  // One result past the limit is looked for, so truncated means that more really exist.
  const matches: (GrepMatch & { nth: number })[] = [];
  const files: string[] = [];
  const counts: { path: string; count: number }[] = [];
  const found = () => (output === "matches" ? matches.length : output === "files" ? files.length : counts.length);
  const contextual = output === "matches" && ((args.context_before ?? 0) > 0 || (args.context_after ?? 0) > 0);
  const bytes = !invert && !contextual ? plan.bytes : null;
  // A search over many files must not hold up everyone else sharing this process (a resident afs's
  // other clients, a server's other requests): between files, others get a turn now and then.
  const pause = turns();
  // -c and -l of a plain literal: counted from the texts' bytes, read in batches (grep-count.ts).
  const counter =
    output !== "matches" && bytes !== null && bytes.exactLength > 0
      ? WindowedCounts.of(index, args.pattern, output === "files" ? 1 : maxCount)
      : null;
  const hashAt = (i: number): Hash | undefined => targets[i]?.sha256 ?? undefined;
  for (const [i, target] of targets.entries()) {
    if (found() > limit) break;
    const turn = pause();
    if (turn) await turn;
    const resume = from && target.path === from.path ? from : null;
    const earlier = resume?.selected ?? 0;
    let nth = earlier;
    const count = counter && !resume ? await counter.at(hashAt, targets.length, i) : undefined;
    if (count !== undefined) {
      if (count === 0) continue;
      if (output === "files") files.push(target.path);
      else counts.push({ path: target.path, count });
      continue;
    }
    // Fast path: the text's bytes searched in memory, only the reported lines decoded.
    // A cold process reads only a large text's candidate blocks.
    const blocks = (target.sha256 && candidates?.get(target.sha256)) || null;
    const runs = bytes && index && target.sha256 && blocks ? await index.runs(target.sha256, blocks) : null;
    const view = bytes && index && target.sha256 && runs === null ? await index.view(target.sha256) : null;
    const viewOptions: ViewOptions = {
      key: target.sha256 as string,
      max:
        output === "files"
          ? 1
          : Math.min(maxCount - earlier, output === "matches" ? limit + 1 - matches.length : maxCount),
      after: resume?.line ?? 0,
      numbered: output === "matches" || (resume?.line ?? 0) > 0,
      withText: output === "matches",
      matches: plan.matches,
    };
    const lines =
      bytes && runs !== null
        ? selectInRuns(runs, bytes, viewOptions)
        : bytes && view !== null
          ? selectInView(view, bytes, blocks, viewOptions)
          : null;
    if (lines !== null) {
      if (lines.length === 0) continue;
      if (output === "files") files.push(target.path);
      else if (output === "counts") counts.push({ path: target.path, count: lines.length });
      else for (const l of lines) matches.push({ path: target.path, ...l, nth: ++nth });
      continue;
    }
    const text = await readTarget(volume, index, target);
    if (text === null) continue;
    const selected = selectLines(text, plan, {
      invert,
      max: output === "files" ? 1 : maxCount - earlier,
      after: resume?.line ?? 0,
      contextBefore: output === "matches" ? (args.context_before ?? 0) : 0,
      contextAfter: output === "matches" ? (args.context_after ?? 0) : 0,
      onLine: (l: SelectedLine) => {
        if (output !== "matches") return true;
        matches.push({ path: target.path, ...l, nth: ++nth });
        return matches.length <= limit;
      },
    });
    if (selected === 0) continue;
    if (output === "files") files.push(target.path);
    else if (output === "counts") counts.push({ path: target.path, count: selected });
  }

  const truncated = found() > limit;
  const page = (last: GrepCursor): { truncated?: true; cursor?: string } =>
    truncated ? { truncated: true, cursor: encodeCursor(last, fingerprint) } : {};
  if (output === "files") {
    const kept = files.slice(0, limit);
    return { mode: "files", files: kept, ...page({ path: kept[kept.length - 1] ?? "", line: null, selected: 0 }) };
  }
  if (output === "counts") {
    const kept = counts.slice(0, limit);
    const last = kept[kept.length - 1];
    return { mode: "counts", counts: kept, ...page({ path: last?.path ?? "", line: null, selected: 0 }) };
  }
  const kept = matches.slice(0, limit);
  const last = kept[kept.length - 1];
  return {
    mode: "matches",
    matches: kept.map(({ nth: _, ...m }) => m),
    ...page({ path: last?.path ?? "", line: last?.line ?? null, selected: last?.nth ?? 0 }),
  };
}

/** The files a search covers: those with a known content hash by hash, and the others. */
interface Scope {
  targets: readonly Target[];
  /** Distinct content hashes of the hashed targets. */
  hashes: readonly Hash[];
  byHash: ReadonlyMap<Hash, readonly Target[]>;
  unhashed: readonly Target[];
}

// Scopes worked out from a volume's walk listing, by the listing (which stays the same array while
// nothing below its directory changes) and then by the path and filters: a warm search over an
// unchanged tree neither walks nor filters again.
const scopes = new WeakMap<readonly Stat[], Map<string, Scope>>();

/** The files to search: `path` itself, or the regular files below it that pass the include/exclude filters. */
async function searchScope(
  volume: Volume,
  path: string,
  include: string | string[] | undefined,
  exclude: string | string[] | undefined,
): Promise<Scope> {
  const stat = await mustStat(volume, path);
  // A file argument is searched itself; a symlink is read through (its own hash is not the content's).
  if (stat.kind !== "dir") return scopeOf([stat.kind === "file" ? stat : { path }]);
  const listing = volume.walkList ? await volume.walkList(path) : await collect(volume.walk(path));
  const key = JSON.stringify([path, include ?? null, exclude ?? null]);
  let byFilter = scopes.get(listing);
  const hit = byFilter?.get(key);
  if (hit) return hit;
  const filter = pathFilter(asList(include), asList(exclude));
  const prefix = path === "/" ? 1 : path.length + 1;
  const targets: Target[] = [];
  // Below a directory only regular files count, and symlinks are not followed (like grep -r).
  for (const s of listing) if (s.kind === "file" && (!filter || filter(s.path.slice(prefix)))) targets.push(s);
  const scope = scopeOf(targets);
  if (!byFilter) {
    byFilter = new Map();
    scopes.set(listing, byFilter);
  }
  // A few filter sets per listing are kept; an agent rarely varies them much.
  if (byFilter.size >= 16) byFilter.clear();
  byFilter.set(key, scope);
  return scope;
}

/** The stored tree `path` lists as and the live changes below it (Volume.storedBase), or null. */
async function storedBase(volume: Volume, path: string): Promise<{ tree: Hash; changed: readonly string[] } | null> {
  if (!volume.storedBase) return null;
  try {
    return await volume.storedBase(path);
  } catch (e) {
    // Gone or not a directory: the walk below says so as it always did.
    if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
    throw e;
  }
}

/** A tree holding `path`'s files that the index has a map of, with what changed since (Volume.priorBase). */
async function priorBase(
  volume: Volume,
  path: string,
  index: TextIndex,
): Promise<{ tree: Hash; under: string; changed: readonly string[] } | null> {
  const has = index.hasTreeMap?.bind(index);
  if (!volume.priorBase || !has) return null;
  try {
    return await volume.priorBase(path, has);
  } catch (e) {
    if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
    throw e;
  }
}

/** The paths of `paths` with no other of them above them. */
function topmost(paths: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const p of [...paths].sort()) if (!within(p, out)) out.add(p);
  return out;
}

/** Whether `path` (relative, no leading "/") is one of `tops` or below one. */
function within(path: string, tops: ReadonlySet<string>): boolean {
  if (tops.size === 0) return false;
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) if (tops.has(path.slice(0, i))) return true;
  return tops.has(path);
}

/** The regular files at or below each of `paths` as they are now (a path gone or a symlink: none). */
async function liveFiles(volume: Volume, paths: readonly string[]): Promise<Target[]> {
  const out: Target[] = [];
  for (const p of paths) {
    const stat = await volume.stat(p);
    if (stat?.kind === "file") out.push(stat);
    else if (stat?.kind === "dir") {
      const listing = volume.walkList ? await volume.walkList(p) : await collect(volume.walk(p));
      for (const s of listing) if (s.kind === "file") out.push(s);
    }
  }
  return out;
}

/** Gives the index a tree's files, relative to it (from an unfiltered scope of every file below `path`). */
async function recordTree(index: TextIndex, tree: Hash, path: string, scope: Scope): Promise<void> {
  // A file whose content hash the volume does not know cannot be mapped: no map.
  if (scope.unhashed.length > 0 || !index.recordTree) return;
  const prefix = path === "/" ? 1 : path.length + 1;
  await index.recordTree(
    tree,
    scope.targets.map((t) => ({ path: t.path.slice(prefix), hash: t.sha256 as Hash })),
  );
}

function scopeOf(targets: readonly Target[]): Scope {
  const byHash = new Map<Hash, Target[]>();
  const unhashed: Target[] = [];
  for (const t of targets) {
    if (!t.sha256) {
      unhashed.push(t);
      continue;
    }
    const same = byHash.get(t.sha256);
    if (same) same.push(t);
    else byHash.set(t.sha256, [t]);
  }
  return { targets, hashes: [...byHash.keys()], byHash, unhashed };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Text of a file to search, or null to skip it (binary, or gone/changed into a directory since the walk). */
async function readTarget(volume: Volume, index: TextIndex | undefined, target: Target): Promise<string | null> {
  if (target.sha256 && index) return index.text(target.sha256);
  try {
    return decodeText(await volume.readFile(target.path));
  } catch (e) {
    if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
    throw e;
  }
}
