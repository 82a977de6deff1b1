import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EmbeddingsServer, startEmbeddingsServer } from "../../test/helpers/embeddings-server.js";
import { indexesOf } from "../../test/helpers/search-indexes.js";
import { writeTinyModel } from "../../test/helpers/tiny-embedding-model.js";
import { tempAfs, tempDir } from "../../test/helpers/tmp.js";
import { LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
import type { Volume } from "../volume/volume.js";
import type { Afs } from "../workspace/afs.js";
import { type QueryArgs, type QueryOptions, query as queryOp } from "./query.js";
import { write } from "./write.js";

const EMBED_VARS = [
  "AFS_EMBED_PROVIDER",
  "AFS_EMBED_MODEL_DIR",
  "AFS_EMBED_BASE_URL",
  "AFS_EMBED_API_KEY",
  "AFS_EMBED_MODEL",
  "OPENAI_API_KEY",
];
const saved = Object.fromEntries(EMBED_VARS.map((k) => [k, process.env[k]]));
/** Sets the embedding settings for this test only (none: no provider). */
function embeddingEnv(vars: Record<string, string> = {}): void {
  for (const k of EMBED_VARS) delete process.env[k];
  Object.assign(process.env, vars);
}
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

// The home each workspace volume came from: query gets its indexes beside the volume, as the MCP
// tools and the CLI pass them; a plain directory gets none.
const homes = new WeakMap<Volume, Afs>();
const query = (volume: Volume, args: QueryArgs, options: QueryOptions = {}) => {
  const home = homes.get(volume);
  return queryOp(volume, args, home ? { ...options, ...indexesOf(home) } : options);
};

async function volumeOf(afs: Afs, name: string): Promise<Volume> {
  const volume = await afs.workspaces.volume(name);
  homes.set(volume, afs);
  return volume;
}

async function workspace(name = "q"): Promise<{ afs: Afs; volume: Volume }> {
  const t = await tempAfs();
  cleanups.push(t.cleanup);
  await t.afs.workspaces.create(name);
  return { afs: t.afs, volume: await volumeOf(t.afs, name) };
}

async function directory(): Promise<{ volume: Volume }> {
  const t = await tempDir("afs-query-");
  cleanups.push(t.cleanup);
  return { volume: await LocalDirVolume.open(t.dir) };
}

const seed = async (volume: Volume, files: Record<string, string | Buffer>) => {
  for (const [path, content] of Object.entries(files)) {
    if (typeof content === "string") await write(volume, { path, content });
    else await volume.writeFile(path, content, { op: "write" });
  }
};

const paths = (r: { results: { path: string }[] }): string[] => r.results.map((h) => h.path);

describe.each([
  ["a workspace (persistent index)", workspace],
  ["a plain directory (chunked per query)", directory],
])("query on %s", (_name, make) => {
  let volume: Volume;
  beforeEach(async () => {
    embeddingEnv();
    ({ volume } = await make());
  });

  it("ranks files by BM25 over chunks: a rare word outweighs a common one, any word may match", async () => {
    const files: Record<string, string> = {};
    // Distinct contents: statistics count each content once, however many files hold it.
    for (let i = 0; i < 8; i++) files[`/common${i}.txt`] = `the error happened on day ${i}\n`;
    files["/rare.txt"] = "a checksum mismatch\n";
    files["/both.txt"] = "error: checksum mismatch\n";
    await seed(volume, files);
    const r = await query(volume, { query: "checksum error", mode: "keyword" });
    expect(r.status).toBe("ok");
    expect(r.warnings).toEqual([]);
    expect(paths(r).slice(0, 2)).toEqual(["/both.txt", "/rare.txt"]);
    expect(r.results).toHaveLength(10);
    expect(r.results[0]).toEqual({
      path: "/both.txt",
      chunk_id: expect.stringMatching(/^[0-9a-f]{12}#0$/),
      start_line: 1,
      end_line: 1,
      score: expect.any(Number),
      snippet: "error: checksum mismatch",
      search_types: ["lex"],
    });
    expect(r.results[1]?.score).toBeGreaterThan(r.results[2]?.score ?? 0);
  });

  it("returns one result per file, its best chunk, with the chunk's lines and a snippet around the best line", async () => {
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler line ${i}`).join("\n");
    await seed(volume, {
      "/doc.md": `# Intro\n\n${filler(20)}\n\n## Scheduling\n\n${filler(5)}\nthe scheduler picks a worker\n${filler(5)}\n\n## Other\n\n${filler(20)}\n`,
    });
    await volume.writeFile("/bin.dat", Buffer.from([0, 115, 99, 104, 101, 100, 117, 108, 101, 114]), { op: "write" });
    const r = await query(volume, { query: "scheduler worker", mode: "keyword" });
    expect(r.results).toEqual([
      expect.objectContaining({
        path: "/doc.md",
        start_line: 24,
        end_line: 36,
        snippet: "filler line 4\nthe scheduler picks a worker\nfiller line 0",
      }),
    ]);
  });

  it("honours phrases, exclusions, path, limit, all and min_score", async () => {
    await seed(volume, {
      "/src/retry.ts": "export function retry() {\n  // exponential backoff\n}\n",
      "/src/backoff.ts": "// backoff without retry: exponential growth\n",
      "/docs/retry.md": "We retry failed requests.\n",
      "/docs/other.md": "nothing relevant\n",
    });
    expect(paths(await query(volume, { query: '"exponential backoff"', mode: "keyword" }))).toEqual(["/src/retry.ts"]);
    expect(paths(await query(volume, { query: "retry -backoff", mode: "keyword" }))).toEqual(["/docs/retry.md"]);
    expect(paths(await query(volume, { query: "retry", mode: "keyword", path: "/docs" }))).toEqual(["/docs/retry.md"]);
    expect(paths(await query(volume, { query: "retry", mode: "keyword", path: "/src/backoff.ts" }))).toEqual([
      "/src/backoff.ts",
    ]);
    expect(await query(volume, { query: "retry", mode: "keyword", limit: 1 })).toMatchObject({
      results: [expect.anything()],
    });
    expect((await query(volume, { query: "retry", mode: "keyword", limit: 1, all: true })).results).toHaveLength(3);
    expect((await query(volume, { query: "retry", mode: "keyword", min_score: 1e9 })).results).toEqual([]);
    expect(
      (await query(volume, { query: "retry", mode: "keyword" }, { maxResults: 2 })).results.map((h) => h.path),
    ).toHaveLength(2);
  });

  it("warns only when the result cap, not the caller's own limit, cut the results", async () => {
    await seed(volume, { "/a.md": "retry\n", "/b.md": "retry again\n", "/c.md": "retry once more\n" });
    const cap = "3 results matched; only the first 2 are returned (the result cap)";
    expect((await query(volume, { query: "retry", mode: "keyword" }, { maxResults: 2 })).warnings).toContain(cap);
    expect((await query(volume, { query: "retry", mode: "keyword", all: true }, { maxResults: 2 })).warnings).toContain(
      cap,
    );
    expect((await query(volume, { query: "retry", mode: "keyword", limit: 2 }, { maxResults: 2 })).warnings).toEqual(
      [],
    );
    expect((await query(volume, { query: "retry", mode: "keyword", limit: 1 }, { maxResults: 2 })).warnings).toEqual(
      [],
    );
  });

  it("lists every path that holds the same content", async () => {
    await seed(volume, {
      "/a/LICENSE": "permission is hereby granted\n",
      "/b/LICENSE": "permission is hereby granted\n",
    });
    expect(paths(await query(volume, { query: "permission granted", mode: "keyword" }))).toEqual([
      "/a/LICENSE",
      "/b/LICENSE",
    ]);
  });

  it("chunks by the regex strategy on request", async () => {
    const lines = Array.from({ length: 90 }, (_, i) => (i === 70 ? "the needle" : `hay ${i}`));
    await seed(volume, { "/f.txt": `${lines.join("\n")}\n` });
    const auto = await query(volume, { query: "needle", mode: "keyword" });
    const regex = await query(volume, { query: "needle", mode: "keyword", chunk_strategy: "regex" });
    expect(regex.results[0]).toMatchObject({ start_line: 41, end_line: 80 });
    expect(auto.results[0]?.start_line).not.toBe(41);
  });

  it("keyword only with a warning in mode query, unavailable in mode semantic, without a provider", async () => {
    await seed(volume, { "/a.txt": "retry with backoff\n" });
    const hybrid = await query(volume, { query: "retry" });
    expect(paths(hybrid)).toEqual(["/a.txt"]);
    expect(hybrid.warnings).toEqual([expect.stringMatching(/^ranked by keyword only: /)]);
    const semantic = await query(volume, { query: "retry", mode: "semantic" });
    expect(semantic).toEqual({ status: "unavailable", results: [], warnings: [expect.any(String)] });
    expect((await query(volume, { query: "retry", mode: "keyword", rerank: "none" })).warnings).toEqual([]);
    expect((await query(volume, { query: "retry", mode: "keyword", rerank: "auto" })).warnings).toEqual([
      expect.stringMatching(/no reranking model/),
    ]);
  });

  it("refuses a query with nothing to look for, and a missing path", async () => {
    await seed(volume, { "/a.txt": "a\n" });
    await expect(query(volume, { query: "!!", mode: "keyword" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(query(volume, { query: "-a", mode: "keyword" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(query(volume, { query: "a", path: "/nope" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("the workspace query index", () => {
  beforeEach(() => embeddingEnv());

  it("chunks lazily, once per blob: an edit re-chunks only the new blob", async () => {
    const { afs, volume } = await workspace();
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) files[`/f${i}.md`] = `# File ${i}\n\nsome words about topic${i}\n`;
    await seed(volume, files);
    expect((await afs.indexes.query.stats("auto")).blobs).toBe(0);
    await query(volume, { query: "topic3", mode: "keyword" });
    expect(await afs.indexes.query.stats("auto")).toEqual({ blobs: 20, chunks: 20 });
    await write(volume, { path: "/f3.md", content: "# File 3\n\nnow about something else\n" });
    const r = await query(volume, { query: "something", mode: "keyword" });
    expect(paths(r)).toEqual(["/f3.md"]);
    expect(await afs.indexes.query.stats("auto")).toEqual({ blobs: 21, chunks: 21 });
    expect((await query(volume, { query: "topic3", mode: "keyword" })).results).toEqual([]);
  });

  it("chunks identical content in two workspaces once, and scopes each query to its workspace", async () => {
    const { afs, volume: a } = await workspace("a");
    await afs.workspaces.create("b");
    const b = await volumeOf(afs, "b");
    await seed(a, { "/x.txt": "shared words\n", "/only-a.txt": "alpha words\n" });
    await seed(b, { "/copy/x.txt": "shared words\n" });
    expect(paths(await query(a, { query: "words", mode: "keyword" }))).toEqual(["/only-a.txt", "/x.txt"]);
    const before = await afs.indexes.query.stats("auto");
    expect(paths(await query(b, { query: "words", mode: "keyword" }))).toEqual(["/copy/x.txt"]);
    expect(await afs.indexes.query.stats("auto")).toEqual(before);
  });

  it("keeps only the scope's files whether it ranks the whole index or a few blobs", async () => {
    const { afs, volume: a } = await workspace("a");
    await afs.workspaces.create("b");
    const b = await volumeOf(afs, "b");
    const many: Record<string, string> = {};
    for (let i = 0; i < 40; i++) many[`/src/m${i}.ts`] = `export const m${i} = "needle number ${i}";\n`;
    await seed(a, many);
    // Another workspace's 100 files outrank all of them, so the best of the whole index are elsewhere.
    const others: Record<string, string> = {};
    for (let i = 0; i < 100; i++) others[`/other${i}.ts`] = `needle needle ${i}\n`;
    await seed(b, others);
    await query(b, { query: "needle", mode: "keyword" });
    const all = await query(a, { query: "needle", mode: "keyword", all: true });
    expect(all.results).toHaveLength(40);
    expect(paths(all).every((p) => p.startsWith("/src/"))).toBe(true);
    expect((await query(a, { query: "needle", mode: "keyword" })).results).toHaveLength(10);
    expect(paths(await query(a, { query: "needle 7", mode: "keyword", path: "/src/m7.ts" }))).toEqual(["/src/m7.ts"]);
    expect(paths(await query(a, { query: "needle 17", mode: "keyword", limit: 1 }))).toEqual(["/src/m17.ts"]);
  });

  it("forgets nothing it should not after a rebuild: drop, then the next query chunks again", async () => {
    const { afs, volume } = await workspace();
    await seed(volume, { "/a.txt": "alpha\n" });
    await query(volume, { query: "alpha", mode: "keyword" });
    await afs.indexes.query.drop();
    expect((await afs.indexes.query.stats("auto")).blobs).toBe(0);
    expect(paths(await query(volume, { query: "alpha", mode: "keyword" }))).toEqual(["/a.txt"]);
  });
});

const TOPIC_FILES = {
  "/notes/pets.md": "# Pets\n\nthe cat and the dog\nthe puppy is a pet\n",
  "/notes/money.md": "# Money\n\nthe invoice and the payment\nthe bank and the tax receipt\n",
  "/notes/build.md": "# Build\n\ncompile the function\ndeploy the server\n",
  "/notes/sky.md": "# Sky\n\nrain and snow\nthe storm and the wind\n",
};

describe("semantic and hybrid search with a local ONNX model", () => {
  let afs: Afs;
  let volume: Volume;
  beforeEach(async () => {
    const dir = await tempDir("afs-tiny-model-");
    cleanups.push(dir.cleanup);
    await writeTinyModel(dir.dir);
    embeddingEnv({ AFS_EMBED_PROVIDER: "local", AFS_EMBED_MODEL_DIR: dir.dir });
    ({ afs, volume } = await workspace());
    await seed(volume, TOPIC_FILES);
  });

  it("semantic mode finds a file by meaning when no word matches, and stores each chunk's vector once", async () => {
    const r = await query(volume, { query: "kitten fur", mode: "semantic" });
    expect(r.status).toBe("ok");
    expect(r.warnings).toEqual([]);
    expect(r.results[0]).toMatchObject({ path: "/notes/pets.md", search_types: ["vec"] });
    expect(r.results[0]?.score).toBeGreaterThan(r.results[1]?.score ?? 1);
    const provider = (await afs.indexes.query.embedder()).provider;
    expect(provider).not.toBeNull();
    expect((await afs.indexes.query.stats("auto", provider?.id)).vectors).toBe(4);
    expect(paths(await query(volume, { query: "hyde: a storm with rain", mode: "semantic" }))[0]).toBe("/notes/sky.md");
    expect((await afs.indexes.query.stats("auto", provider?.id)).vectors).toBe(4);
  });

  it("mode query fuses keyword and vector rankings by reciprocal rank, and explains each result", async () => {
    const r = await query(volume, { query: "payment money", explain: true });
    expect(r.warnings).toEqual([]);
    expect(r.results[0]).toMatchObject({ path: "/notes/money.md", search_types: ["lex", "vec"] });
    expect(r.explain).toMatchObject({
      mode: "query",
      fusion: "rrf",
      rrf_k: 60,
      searches: [
        { type: "lex", query: "payment money" },
        { type: "vec", query: "payment money" },
      ],
    });
    const top = r.explain?.results[0];
    expect(top?.components).toEqual([
      { search: 0, type: "lex", rank: 1, bm25: expect.any(Number) },
      { search: 1, type: "vec", rank: 1, similarity: expect.any(Number) },
    ]);
    expect(top?.fused_score).toBeCloseTo(2 / 61, 6);
    expect(r.results[0]?.score).toBeCloseTo(2 / 61, 6);
    // A typed document: the lex clause finds nothing, the vec clause still ranks by meaning.
    const typed = await query(volume, { query: "lex: zebra\nvec: kitten" });
    expect(typed.results[0]).toMatchObject({ path: "/notes/pets.md", search_types: ["vec"] });
  });

  it("leaves vectors for a later query when a query's embedding budget runs out, saying so", async () => {
    const r = await query(volume, { query: "kitten", mode: "semantic" }, { embedBudget: 1 });
    expect(r.warnings).toEqual([expect.stringMatching(/^3 chunks in scope have no vectors yet/)]);
    const again = await query(volume, { query: "kitten", mode: "semantic" });
    expect(again.warnings).toEqual([]);
    expect(again.results[0]?.path).toBe("/notes/pets.md");
  });
});

describe("semantic search through an OpenAI-compatible HTTP endpoint", () => {
  let server: EmbeddingsServer;
  beforeEach(async () => {
    server = await startEmbeddingsServer();
    cleanups.push(() => server.close());
    embeddingEnv({
      AFS_EMBED_PROVIDER: "openai",
      AFS_EMBED_BASE_URL: server.baseUrl,
      AFS_EMBED_API_KEY: "test-key",
      AFS_EMBED_MODEL: "test-model",
    });
  });

  it("embeds each chunk once, then only the query", async () => {
    const { volume } = await workspace();
    await seed(volume, TOPIC_FILES);
    const first = await query(volume, { query: "the storm and the wind", mode: "semantic" });
    expect(first.status).toBe("ok");
    expect(first.results).toHaveLength(4);
    const embedded = server.requests.flatMap((r) => r.input);
    expect(embedded).toHaveLength(5);
    await query(volume, { query: "the payment", mode: "semantic" });
    expect(server.requests.flatMap((r) => r.input)).toHaveLength(6);
  });

  it("falls back to keyword ranking with a warning when the provider fails in mode query", async () => {
    process.env.AFS_EMBED_API_KEY = "wrong-key";
    const { volume } = await workspace();
    await seed(volume, TOPIC_FILES);
    const r = await query(volume, { query: "storm wind", explain: true });
    expect(r.status).toBe("ok");
    expect(paths(r)).toEqual(["/notes/sky.md"]);
    expect(r.warnings).toEqual([
      expect.stringMatching(/^semantic ranking failed, so results are ranked by keyword only: /),
    ]);
    expect(r.explain?.searches).toEqual([
      { type: "lex", query: "storm wind", candidates: 1 },
      { type: "vec", query: "storm wind", candidates: 0 },
    ]);
    await expect(query(volume, { query: "storm wind", mode: "semantic" })).rejects.toMatchObject({
      code: expect.any(String),
    });
  });
});
