// Retrieval quality of file_query on real text: the API declarations two npm packages ship, with
// queries written by reading them (phrased as a developer would ask, not as file names) and the
// files that answer each. Prints MRR@10 and recall@10 for keyword mode (both chunk strategies) and,
// as a smoke check only, hybrid mode with the tiny test model (not a real embedding model).
// Run: node --import tsx bench/retrieval-quality.ts
import { cpSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { query } from "../src/ops/query.js";
import { Afs } from "../src/workspace/afs.js";
import { writeTinyModel } from "../test/helpers/tiny-embedding-model.js";
import { emitJson, fmtBytes, isMain, makeTempDir, printTable, REPO_ROOT, removeDir } from "./lib.js";

const NODE_TYPES = join(REPO_ROOT, "node_modules/@types/node");
const TS_LIB = join(REPO_ROOT, "node_modules/typescript/lib");
const version = (dir: string): string =>
  (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;

/** A question and the files (workspace paths) that answer it. */
export interface Judged {
  query: string;
  relevant: string[];
}

const n = (file: string): string => `/node/${file}`;
const ts = (file: string): string => `/typescript/${file}`;

export const QUERIES: readonly Judged[] = [
  { query: "compute a SHA-256 digest of some data", relevant: [n("crypto.d.ts")] },
  { query: "resolve a hostname to its IP addresses", relevant: [n("dns.d.ts"), n("dns/promises.d.ts")] },
  { query: "run a shell command in a subprocess and capture what it prints", relevant: [n("child_process.d.ts")] },
  {
    query: "measure elapsed time with high resolution timestamps",
    relevant: [n("perf_hooks.d.ts"), n("process.d.ts")],
  },
  { query: "read a file line by line from a stream", relevant: [n("readline.d.ts"), n("readline/promises.d.ts")] },
  { query: "compress data with gzip or deflate", relevant: [n("zlib.d.ts")] },
  { query: "parse the key value pairs of a URL query string", relevant: [n("querystring.d.ts"), n("url.d.ts")] },
  { query: "run JavaScript code in an isolated sandbox context", relevant: [n("vm.d.ts")] },
  { query: "watch a directory for file changes", relevant: [n("fs.d.ts"), n("fs/promises.d.ts")] },
  { query: "start a TCP server that accepts socket connections", relevant: [n("net.d.ts")] },
  { query: "send and receive UDP datagrams", relevant: [n("dgram.d.ts")] },
  { query: "run work on other threads and pass messages to them", relevant: [n("worker_threads.d.ts")] },
  { query: "fork worker processes that share one server port", relevant: [n("cluster.d.ts")] },
  { query: "encrypted connection with certificates and a private key", relevant: [n("tls.d.ts"), n("https.d.ts")] },
  { query: "server push of extra streams to the client", relevant: [n("http2.d.ts")] },
  { query: "keep a context value across asynchronous callbacks", relevant: [n("async_hooks.d.ts")] },
  {
    query: "decode bytes into a string without splitting multibyte characters",
    relevant: [n("string_decoder.d.ts")],
  },
  { query: "number of CPU cores and free memory of the machine", relevant: [n("os.d.ts")] },
  { query: "join directory names into a file path and normalize it", relevant: [n("path.d.ts")] },
  { query: "assert that two objects are deeply equal", relevant: [n("assert.d.ts"), n("assert/strict.d.ts")] },
  { query: "define test cases with describe and it and mock functions", relevant: [n("test.d.ts")] },
  { query: "format a string with printf-like placeholders", relevant: [n("util.d.ts")] },
  { query: "write a heap snapshot to find memory leaks", relevant: [n("v8.d.ts"), n("inspector.generated.d.ts")] },
  { query: "publish diagnostic messages to named channels", relevant: [n("diagnostics_channel.d.ts")] },
  {
    query: "pipe streams together and handle errors with a promise",
    relevant: [n("stream/promises.d.ts"), n("stream.d.ts")],
  },
  { query: "wait for a timer with a promise instead of a callback", relevant: [n("timers/promises.d.ts")] },
  { query: "emit events and register listeners for them", relevant: [n("events.d.ts")] },
  { query: "interactive read eval print loop", relevant: [n("repl.d.ts")] },
  { query: "does the terminal support colors", relevant: [n("tty.d.ts")] },
  { query: "WebAssembly program with system interface access to files", relevant: [n("wasi.d.ts")] },
  { query: "single executable application with embedded assets", relevant: [n("sea.d.ts")] },
  { query: "find the last element of an array that matches a predicate", relevant: [ts("lib.es2023.array.d.ts")] },
  { query: "sort an array into a new copy without changing the original", relevant: [ts("lib.es2023.array.d.ts")] },
  {
    query: "group the items of an iterable by a key",
    relevant: [ts("lib.es2024.object.d.ts"), ts("lib.es2024.collection.d.ts")],
  },
  { query: "replace every occurrence of a substring", relevant: [ts("lib.es2021.string.d.ts")] },
  {
    query: "reference an object without keeping it from being garbage collected",
    relevant: [ts("lib.es2021.weakref.d.ts")],
  },
  { query: "wait until all promises settle even when some reject", relevant: [ts("lib.es2020.promise.d.ts")] },
  {
    query: "create a promise together with its resolve and reject functions",
    relevant: [ts("lib.es2024.promise.d.ts")],
  },
  { query: "integers of arbitrary precision", relevant: [ts("lib.es2020.bigint.d.ts")] },
  { query: "split text into graphemes, words or sentences for a locale", relevant: [ts("lib.es2022.intl.d.ts")] },
  { query: "intercept property reads and writes with handler traps", relevant: [ts("lib.es2015.proxy.d.ts")] },
  { query: "pad a string at the start to a given length", relevant: [ts("lib.es2017.string.d.ts")] },
  { query: "does an object have a property of its own", relevant: [ts("lib.es2022.object.d.ts")] },
];

/** Copies the two packages' declaration files into `dir` as /node/… and /typescript/…. */
function writeCorpus(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const copy = (from: string, to: string): void => {
    mkdirSync(join(to, ".."), { recursive: true });
    cpSync(from, to);
    files++;
    bytes += readFileSync(from).length;
  };
  for (const e of readdirSync(NODE_TYPES, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith(".d.ts")) {
      const rel = join(e.parentPath, e.name).slice(NODE_TYPES.length + 1);
      copy(join(NODE_TYPES, rel), join(dir, "node", rel));
    }
  }
  for (const name of readdirSync(TS_LIB)) {
    if (/^lib\..*\.d\.ts$/.test(name)) copy(join(TS_LIB, name), join(dir, "typescript", name));
  }
  return { files, bytes };
}

export interface Scores {
  mrr: number;
  recall: number;
  /** Rank (1-based) of the first relevant file per query, 0 when none is in the top 10. */
  ranks: number[];
}

async function evaluate(run: (q: string) => Promise<string[]>): Promise<Scores> {
  const ranks: number[] = [];
  let recall = 0;
  for (const j of QUERIES) {
    const top = (await run(j.query)).slice(0, 10);
    const first = top.findIndex((p) => j.relevant.includes(p));
    ranks.push(first + 1);
    recall += j.relevant.filter((p) => top.includes(p)).length / j.relevant.length;
  }
  const mrr = ranks.reduce((sum, r) => sum + (r > 0 ? 1 / r : 0), 0) / QUERIES.length;
  return { mrr, recall: recall / QUERIES.length, ranks };
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const base = await makeTempDir("afs-bench-quality-");
  try {
    const corpus = join(base, "corpus");
    const facts = writeCorpus(corpus);
    const packages = `@types/node@${version(NODE_TYPES)} + typescript@${version(join(TS_LIB, ".."))} lib/*.d.ts`;
    console.log(`corpus: ${packages}: ${facts.files} files, ${fmtBytes(facts.bytes)}; ${QUERIES.length} queries`);

    for (const k of Object.keys(process.env))
      if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete process.env[k];
    const afs = await Afs.open({ home: join(base, "home") });
    await afs.workspaces.import("docs", corpus);
    const volume = await afs.workspaces.volume("docs");
    const indexes = { text: afs.indexes.text, query: afs.indexes.query };
    const paths = async (q: string, args: Record<string, unknown>): Promise<string[]> =>
      (await query(volume, { query: q, limit: 10, ...args }, { indexes })).results.map((h) => h.path);

    const keyword = await evaluate((q) => paths(q, { mode: "keyword" }));
    const keywordRegex = await evaluate((q) => paths(q, { mode: "keyword", chunk_strategy: "regex" }));
    await afs.close();

    // Hybrid with the tiny test model: proves the pipeline end to end, says nothing about quality.
    const model = join(base, "model");
    await writeTinyModel(model);
    process.env.AFS_EMBED_PROVIDER = "local";
    process.env.AFS_EMBED_MODEL_DIR = model;
    const afs2 = await Afs.open({ home: join(base, "home") });
    const volume2 = await afs2.workspaces.volume("docs");
    const indexes2 = { text: afs2.indexes.text, query: afs2.indexes.query };
    const start = performance.now();
    const hybrid = await evaluate(async (q) => {
      const r = await query(
        volume2,
        { query: q, limit: 10 },
        { embedBudget: Number.POSITIVE_INFINITY, indexes: indexes2 },
      );
      if (!r.results.some((h) => h.search_types.includes("vec"))) throw new Error("hybrid ran without vectors");
      return r.results.map((h) => h.path);
    });
    const hybridMs = performance.now() - start;
    await afs2.close();

    printTable(
      "first relevant rank per query (0 = not in the top 10)",
      ["query", "keyword auto", "keyword regex", "hybrid tiny"],
      QUERIES.map((j, i) => [j.query, keyword.ranks[i] ?? 0, keywordRegex.ranks[i] ?? 0, hybrid.ranks[i] ?? 0]),
    );
    printTable(
      `retrieval quality over ${packages}`,
      ["mode", "MRR@10", "recall@10", "found in top 10"],
      [
        [
          "keyword, chunk_strategy auto",
          r3(keyword.mrr),
          r3(keyword.recall),
          `${keyword.ranks.filter((r) => r > 0).length}/${QUERIES.length}`,
        ],
        [
          "keyword, chunk_strategy regex",
          r3(keywordRegex.mrr),
          r3(keywordRegex.recall),
          `${keywordRegex.ranks.filter((r) => r > 0).length}/${QUERIES.length}`,
        ],
        [
          "hybrid, tiny test model (smoke only)",
          r3(hybrid.mrr),
          r3(hybrid.recall),
          `${hybrid.ranks.filter((r) => r > 0).length}/${QUERIES.length}`,
        ],
      ],
    );
    console.log(
      `\nThe tiny model knows ~40 words (everything else is [UNK]); its vectors are not meaningful, so the hybrid row only shows that fusion runs end to end (first hybrid pass, embedding every chunk: ${(hybridMs / 1000).toFixed(1)} s).`,
    );
    emitJson("retrieval-quality", {
      corpus: packages,
      files: facts.files,
      bytes: facts.bytes,
      queries: QUERIES.length,
      keyword: { mrr10: r3(keyword.mrr), recall10: r3(keyword.recall) },
      keyword_regex: { mrr10: r3(keywordRegex.mrr), recall10: r3(keywordRegex.recall) },
      hybrid_tiny_smoke: { mrr10: r3(hybrid.mrr), recall10: r3(hybrid.recall) },
    });
  } finally {
    await removeDir(base);
  }
}

if (isMain(import.meta.url)) await main();
