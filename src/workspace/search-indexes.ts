// Driving the search indexes for `afs index`: what they hold against what the workspaces hold,
// and building what is missing (query passages, grep's content index, and on request vectors).
// Both indexes are keyed by content hash, so each distinct blob is indexed once for all workspaces.
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { PassageStrategy } from "../search/passages.js";
import type { Progress, ScopeFile } from "../search/query-index.js";
import type { TextIndexStatus } from "../search/text-index.js";
import type { Volume } from "../volume/volume.js";
import type { SearchFiles } from "./engine/search-files.js";

/** The strategy `afs index` builds: the default of file_query. */
const STRATEGY: PassageStrategy = "auto";

export interface WorkspaceCoverage {
  name: string;
  files: number;
  /** Distinct contents among the files. */
  blobs: number;
  bytes: number;
  /** Of the blobs, those split into passages. */
  chunked: number;
  chunks: number;
  /** Passages with a vector from the configured provider (absent without one). */
  vectors?: number;
  /**
   * Whether grep's content index holds the map of contents to paths of the workspace's head tree:
   * a new process's search then finds its candidates' paths by lookups, not by listing the tree.
   */
  mapped?: boolean;
}

export interface IndexStatus {
  index_file: string;
  index_bytes: number;
  /** The embedding provider's id, or null with why semantic search is off. */
  provider: string | null;
  provider_note?: string;
  workspaces: WorkspaceCoverage[];
  /** The workspaces together (a blob several hold counts once). */
  total: Omit<WorkspaceCoverage, "name">;
  /** The whole index, including contents no workspace holds any more. */
  stored: { blobs: number; chunks: number; vectors?: number };
  text: TextIndexStatus;
}

export interface BuildOptions {
  embeddings?: boolean;
  /** Drop the passage index and grep's content index first (with `embeddings`, the vectors too). */
  rebuild?: boolean;
  onProgress?: (stage: "chunks" | "text" | "vectors", done: number, total: number) => void;
}

export interface BuildResult {
  workspaces: string[];
  blobs: number;
  bytes: number;
  chunks: { ms: number; blobs_added: number };
  /** `mapped`: head trees with a map of contents to paths (grep answers their first search by lookups). */
  text: { ms: number; indexed: number; bytes: number; mapped?: number };
  vectors?: { ms: number; provider: string; embedded: number };
}

/** What indexing reads: the workspaces' live files and the home's search files. */
export interface IndexSource {
  workspaces: { list(): Promise<{ name: string }[]>; volume(name: string): Promise<Volume> };
  search: SearchFiles;
}

/** A workspace file: a workspace always knows its files' content hashes. */
type LiveFile = ScopeFile & { hash: Hash };

/** The live files of each workspace named (all when none is). */
async function liveFiles(afs: IndexSource, names: readonly string[]): Promise<Map<string, LiveFile[]>> {
  const chosen = names.length > 0 ? names : (await afs.workspaces.list()).map((w) => w.name);
  const out = new Map<string, LiveFile[]>();
  for (const name of chosen) {
    const files: LiveFile[] = [];
    for await (const s of (await afs.workspaces.volume(name)).walk("/")) {
      if (s.kind === "file" && s.sha256) files.push({ path: s.path, size: s.size, hash: s.sha256 });
    }
    out.set(name, files);
  }
  return out;
}

/** One file per distinct content. */
function distinct(files: Iterable<LiveFile>): LiveFile[] {
  const byHash = new Map<Hash, LiveFile>();
  for (const f of files) if (!byHash.has(f.hash)) byHash.set(f.hash, f);
  return [...byHash.values()];
}

export async function indexStatus(afs: IndexSource, names: readonly string[] = []): Promise<IndexStatus> {
  const index = afs.search.query;
  const embedder = await index.embedder();
  const provider = embedder.provider ?? undefined;
  const byWorkspace = await liveFiles(afs, names);
  const coverage = async (name: string, files: LiveFile[]): Promise<WorkspaceCoverage> => {
    const unique = distinct(files);
    const c = await index.coverage(STRATEGY, new Set(unique.map((f) => f.hash)), provider);
    return {
      name,
      files: files.length,
      blobs: unique.length,
      bytes: unique.reduce((sum, f) => sum + f.size, 0),
      chunked: c.chunked,
      chunks: c.chunks,
      ...(provider ? { vectors: c.vectors } : {}),
    };
  };
  const workspaces: WorkspaceCoverage[] = [];
  for (const [name, files] of byWorkspace) {
    const head = await (await afs.workspaces.volume(name)).storedBase?.("/");
    workspaces.push({ ...(await coverage(name, files)), mapped: head ? afs.search.text.hasTreeMap(head.tree) : false });
  }
  const { name: _, ...total } = await coverage("", [...byWorkspace.values()].flat());
  return {
    index_file: afs.search.db.path,
    index_bytes: afs.search.db.bytes(),
    provider: provider?.id ?? null,
    ...(embedder.provider ? {} : { provider_note: embedder.message }),
    workspaces,
    total,
    stored: await index.stats(STRATEGY, provider?.id),
    text: await afs.search.text.status(),
  };
}

export async function buildIndexes(
  afs: IndexSource,
  names: readonly string[],
  options: BuildOptions = {},
): Promise<BuildResult> {
  const index = afs.search.query;
  const embedder = options.embeddings ? await index.embedder() : undefined;
  if (embedder && !embedder.provider) {
    throw new AfsError("INVALID_ARGUMENT", `--embeddings needs an embedding provider: ${embedder.message}`);
  }
  const byWorkspace = await liveFiles(afs, names);
  const files = distinct([...byWorkspace.values()].flat());
  const progress = (stage: "chunks" | "text" | "vectors"): Progress | undefined =>
    options.onProgress ? (done, total) => options.onProgress?.(stage, done, total) : undefined;
  if (options.rebuild) {
    await index.drop({ vectors: options.embeddings === true });
    await afs.search.text.clear();
  }

  const before = (await index.stats(STRATEGY)).blobs;
  let start = performance.now();
  await index.prepare(files, STRATEGY, progress("chunks"));
  const chunks = {
    ms: Math.round(performance.now() - start),
    blobs_added: (await index.stats(STRATEGY)).blobs - before,
  };

  start = performance.now();
  const built = await afs.search.text.build(
    files.map((f) => f.hash),
    { onProgress: progress("text"), sizes: new Map(files.map((f) => [f.hash, f.size])) },
  );
  const text = { ms: Math.round(performance.now() - start), indexed: built.indexed, bytes: built.bytes };

  const result: BuildResult = {
    workspaces: [...byWorkspace.keys()],
    blobs: files.length,
    bytes: files.reduce((sum, f) => sum + f.size, 0),
    chunks,
    text,
  };
  if (embedder?.provider) {
    const p = embedder.provider;
    start = performance.now();
    const scope = new Set(files.map((f) => f.hash));
    const before = (await index.stats(STRATEGY, p.id)).vectors ?? 0;
    await index.embed(p, STRATEGY, scope, { onProgress: progress("vectors") });
    const after = (await index.stats(STRATEGY, p.id)).vectors ?? 0;
    result.vectors = { ms: Math.round(performance.now() - start), provider: p.id, embedded: after - before };
  }
  return result;
}
