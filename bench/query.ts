// file_query on the 4,000-file corpus: how long the chunk index takes to build (and its MiB/s),
// its size on disk against the corpus, warm keyword query latency through the core operation, and
// the time to re-index after one file changes. A plain directory (no index: chunked per query) is
// measured once for comparison.
// Run: node --import tsx bench/query.ts
import { statSync } from "node:fs";
import { join } from "node:path";
import { query } from "../src/ops/query.js";
import type { ScopeFile } from "../src/search/query-index.js";
import { LocalDirVolume } from "../src/volume/local-dir/local-dir-volume.js";
import { Afs } from "../src/workspace/afs.js";
import { internalsOf } from "../src/workspace/engine/internals.js";
import { generateCorpus, RARE_LITERALS } from "./corpus.js";
import {
  emitJson,
  fmtBytes,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  removeDir,
  round,
  summarize,
  timeMs,
} from "./lib.js";

/** Queries by kind: rare literals, identifiers, and questions in the corpus's (very common) words. */
export const QUERIES: Readonly<Record<string, readonly string[]>> = {
  rare: RARE_LITERALS.map((r) => (r.literal.includes(" ") ? `"${r.literal}"` : r.literal)),
  identifier: ["messageContext", "fileRetry", "snapshotCount", "policyItem", "scopeChunk"],
  question: [
    "where is the retry backoff computed",
    "how does the session token get validated",
    "merge the snapshot of a remote branch",
    "checkpoint history of the agent workspace",
    "parse the config profile",
    "render the user view",
    "flush the pending batch queue",
    "which worker handles the request",
    "compare the design of the release",
    "measure the cache metric",
  ],
};

const ROUNDS = 10;
const EDITS = 20;

const indexBytes = (path: string): number =>
  ["", "-wal"].reduce((sum, s) => {
    try {
      return sum + statSync(path + s).size;
    } catch {
      return sum;
    }
  }, 0);

async function main(): Promise<void> {
  const base = await makeTempDir("afs-bench-query-");
  try {
    for (const k of Object.keys(process.env))
      if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete process.env[k];
    const corpus = generateCorpus(join(base, "corpus"));
    console.log(
      `corpus: ${corpus.files} files, ${fmtBytes(corpus.bytes)} (${corpus.uniqueBlobs} distinct, ${fmtBytes(corpus.uniqueBytes)})`,
    );
    const afs = await Afs.open({ home: join(base, "home") });
    await afs.workspaces.import("bench", corpus.dir);
    const volume = await afs.workspaces.volume("bench");
    const files: ScopeFile[] = [];
    for await (const s of volume.walk("/"))
      if (s.kind === "file") files.push({ path: s.path, size: s.size, hash: s.sha256 });

    // Build: every distinct blob chunked, tokenized and put in the FTS index.
    const build = await timeMs(() => afs.indexes.query.prepare(files, "auto"));
    const stats = await afs.indexes.query.stats("auto");
    const mibPerS = corpus.uniqueBytes / 1024 / 1024 / (build.ms / 1000);
    internalsOf(afs).searchDb.db.pragma("wal_checkpoint(TRUNCATE)");
    const size = indexBytes(internalsOf(afs).searchDb.path);

    // Warm keyword latency, every query once before timing.
    const indexes = { text: afs.indexes.text, query: afs.indexes.query };
    const run = (q: string) => query(volume, { query: q, mode: "keyword" }, { indexes });
    const all = Object.values(QUERIES).flat();
    for (const q of all) await run(q);
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(QUERIES).map((k) => [k, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [kind, list] of Object.entries(QUERIES)) {
        for (const q of list) samples[kind]?.push((await timeMs(() => run(q))).ms);
      }
    }
    const overall = summarize(Object.values(samples).flat());

    // Re-index after one edit: the next query chunks the new blob (and only it).
    const targets = files.filter((f) => f.size > 4096 && f.size < 32768 && /\.(ts|md|py|go)$/.test(f.path));
    const afterEdit: number[] = [];
    const chunking: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const f = targets[(i * 37) % targets.length] as ScopeFile;
      const text = (await volume.readFile(f.path)).toString("utf8");
      await volume.writeFile(f.path, Buffer.from(`${text}\n// edited ${i}: zzedit${i}\n`), { op: "write" });
      const before = (await afs.indexes.query.stats("auto")).blobs;
      afterEdit.push((await timeMs(() => run("retry backoff"))).ms);
      if ((await afs.indexes.query.stats("auto")).blobs !== before + 1)
        throw new Error("an edit should chunk exactly one new blob");
      warm.push((await timeMs(() => run("retry backoff"))).ms);
      // The chunking alone, on a fresh edit of the same file.
      await volume.writeFile(f.path, Buffer.from(`${text}\n// again ${i}\n`), { op: "write" });
      const stat = await volume.stat(f.path);
      chunking.push(
        (
          await timeMs(() =>
            afs.indexes.query.prepare([{ path: f.path, size: stat?.size ?? 0, hash: stat?.sha256 }], "auto"),
          )
        ).ms,
      );
    }
    await afs.close();

    // A plain directory has no index: every query reads and chunks every file.
    const local = await LocalDirVolume.open(corpus.dir);
    const scan: number[] = [];
    for (let i = 0; i < 3; i++)
      scan.push((await timeMs(() => query(local, { query: "retry backoff", mode: "keyword" }))).ms);

    printTable(
      "chunk index build (every distinct blob of the corpus)",
      ["blobs", "chunks", "time (ms)", "MiB/s", "index on disk", "index / corpus"],
      [
        [
          stats.blobs,
          stats.chunks,
          fmtMs(build.ms),
          mibPerS.toFixed(1),
          fmtBytes(size),
          `${((100 * size) / corpus.bytes).toFixed(0)}%`,
        ],
      ],
    );
    printTable(
      `keyword file_query latency, warm, core operation (${ROUNDS} rounds; ms)`,
      ["queries", "n", "p50", "p95", "max"],
      [
        ...Object.entries(samples).map(([kind, s]) => {
          const m = summarize(s);
          return [`${kind} (${QUERIES[kind]?.length})`, m.n, fmtMs(m.p50), fmtMs(m.p95), fmtMs(m.max)];
        }),
        ["all", overall.n, fmtMs(overall.p50), fmtMs(overall.p95), fmtMs(overall.max)],
      ],
    );
    const edit = summarize(afterEdit);
    const chunk = summarize(chunking);
    const steady = summarize(warm);
    printTable(
      `after editing one file (${EDITS} edits of 4-32 KiB files; ms)`,
      ["measure", "p50", "p95"],
      [
        ["first query after the edit (chunks the new blob)", fmtMs(edit.p50), fmtMs(edit.p95)],
        ["the same query again", fmtMs(steady.p50), fmtMs(steady.p95)],
        ["chunking the new blob alone (prepare)", fmtMs(chunk.p50), fmtMs(chunk.p95)],
      ],
    );
    console.log(`\nplain directory, no index (reads and chunks all files per query): ${scan.map(fmtMs).join(", ")} ms`);
    emitJson("query", {
      files: corpus.files,
      corpus_bytes: corpus.bytes,
      build: { blobs: stats.blobs, chunks: stats.chunks, ms: round(build.ms), mib_per_s: round(mibPerS) },
      index_bytes: size,
      index_ratio: round(size / corpus.bytes),
      keyword_ms: {
        p50: round(overall.p50),
        p95: round(overall.p95),
        ...Object.fromEntries(Object.entries(samples).map(([k, s]) => [`${k}_p50`, round(summarize(s).p50)])),
      },
      reindex_ms: { first_query_p50: round(edit.p50), warm_query_p50: round(steady.p50), chunk_p50: round(chunk.p50) },
      plain_directory_ms: round(summarize(scan).p50),
    });
  } finally {
    await removeDir(base);
  }
}

if (isMain(import.meta.url)) await main();
