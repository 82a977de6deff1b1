// `afs index status|build|rebuild` and `afs fs query` end to end through the built CLI.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinyModel } from "../helpers/tiny-embedding-model.js";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  // No provider from the environment: these runs test keyword search unless they set one.
  for (const k of Object.keys(afs.env)) if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete afs.env[k];
  afs.ok(["ws", "create", "one"]);
  afs.ok(["ws", "create", "two"]);
  afs.ok(["ws", "use", "one"]);
  const put = (ws: string, path: string, content: string) =>
    afs.ok(["fs", "write", path, "-w", ws, "--content", content]);
  put(
    "one",
    "/src/retry.ts",
    "export function retry(fn) {\n  // exponential backoff between attempts\n  return fn();\n}\n",
  );
  put("one", "/docs/notes.md", "# Notes\n\nretry later, says the cat\n");
  put("two", "/docs/notes.md", "# Notes\n\nretry later, says the cat\n");
  put("two", "/pets.md", "# Pets\n\nthe dog and the puppy\n");
});
afterAll(() => afs.cleanup());

interface Status {
  provider: string | null;
  workspaces: {
    name: string;
    files: number;
    blobs: number;
    chunked: number;
    chunks: number;
    vectors?: number;
    mapped?: boolean;
  }[];
  total: { files: number; blobs: number; chunked: number };
  stored: { blobs: number; chunks: number; vectors?: number };
  text: { texts: number };
}

describe("afs index", () => {
  it("status counts contents per workspace; build chunks what is missing once; rebuild starts over", () => {
    const before = afs.json<Status>(["index", "status"]);
    expect(before.provider).toBeNull();
    expect(before.workspaces.map((w) => [w.name, w.files, w.blobs, w.chunked])).toEqual([
      ["one", 2, 2, 0],
      ["two", 2, 2, 0],
    ]);
    expect(before.total).toMatchObject({ files: 4, blobs: 3, chunked: 0 });

    const built = afs.json<{ blobs: number; chunks: { blobs_added: number }; text: { indexed: number } }>([
      "index",
      "build",
    ]);
    // With the contents indexed, each head tree's map of contents to paths is written too.
    expect(built).toMatchObject({ blobs: 3, chunks: { blobs_added: 3 }, text: { indexed: 3, mapped: 2 } });
    expect(afs.ok(["index", "build"])).toMatch(/^2 workspaces: 3 distinct contents .*\nchunks: 0 contents chunked/);
    const after = afs.json<Status>(["index", "status"]);
    expect(after.total).toMatchObject({ blobs: 3, chunked: 3 });
    expect(after.stored).toEqual({ blobs: 3, chunks: 3 });
    expect(after.text.texts).toBe(3);
    expect(after.workspaces.map((w) => [w.name, w.mapped])).toEqual([
      ["one", true],
      ["two", true],
    ]);
    expect(afs.ok(["index", "status"])).toMatch(/\ngrep's path maps: 2\/2 head trees mapped\n/);
    expect(afs.ok(["index", "status", "-w", "two"])).toMatch(
      /WORKSPACE +FILES +CONTENTS +CHUNKED +CHUNKS\ntwo +2 +2 \(.*\) +2\/2 +2\n/,
    );

    expect(afs.json<{ chunks: { blobs_added: number } }>(["index", "rebuild", "-w", "one"]).chunks.blobs_added).toBe(2);
    const rebuilt = afs.json<Status>(["index", "status"]);
    expect(rebuilt.stored.blobs).toBe(2);
    expect(rebuilt.text.texts).toBe(2);
  });

  it("build --embeddings without a provider says how to configure one", () => {
    const r = afs.run(["index", "build", "--embeddings"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^afs: --embeddings needs an embedding provider: .*OPENAI_API_KEY.*\[INVALID_ARGUMENT\]\n$/,
    );
  });

  it("build --embeddings computes vectors once with the local model, and status counts them", async () => {
    const dir = afs.tmp("model");
    await writeTinyModel(dir);
    const env = { AFS_EMBED_PROVIDER: "local", AFS_EMBED_MODEL_DIR: dir };
    const run = (args: string[]) => {
      const r = afs.run([...args, "--json"], { env });
      if (r.status !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout);
    };
    expect(run(["index", "build", "--embeddings"]).vectors).toMatchObject({ embedded: 3 });
    expect(run(["index", "build", "--embeddings"]).vectors).toMatchObject({ embedded: 0 });
    const status = run(["index", "status"]) as Status;
    expect(status.provider).toMatch(/^onnx:/);
    expect(status.stored.vectors).toBe(3);
    expect(status.workspaces.map((w) => w.vectors)).toEqual([2, 2]);
    const hits = run(["fs", "query", "kitten", "-w", "two", "--mode", "semantic"]);
    expect(hits.results[0]).toMatchObject({ path: "/pets.md", search_types: ["vec"] });
  });
});

describe("afs fs query", () => {
  it("prints ranked results with snippets; warnings go to stderr; --json is the tool's result", () => {
    const r = afs.run(["fs", "query", "retry backoff", "--explain"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^\/src\/retry\.ts:1-4 {2}score [\d.]+ {2}\[lex\]\n {4}export function retry\(fn\) \{\n {6}\/\/ exponential backoff between attempts\n {4}\(lex #1 bm25 [\d.]+\)\n\n\/docs\/notes\.md:1-3 /,
    );
    expect(r.stderr).toMatch(/^afs: warning: ranked by keyword only: semantic search is off/);
    const json = afs.json<{ status: string; results: { path: string }[] }>([
      "fs",
      "query",
      "retry",
      "/docs",
      "--mode",
      "keyword",
    ]);
    expect(json).toMatchObject({ status: "ok", results: [{ path: "/docs/notes.md" }], warnings: [] });
    expect(afs.json<{ results: unknown[] }>(["fs", "query", "-m", "keyword", "-n", "1", "retry"]).results).toHaveLength(
      1,
    );
    const bad = afs.run(["fs", "query", "x", "--mode", "fuzzy"]);
    expect(bad.status).toBe(2);
  });
});

describe("afs gc", () => {
  it("prunes index rows of the contents it deletes and reports them; without an index file, creates none", async () => {
    const home = await cli();
    try {
      for (const k of Object.keys(home.env))
        if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete home.env[k];
      home.ok(["ws", "create", "keep"]);
      home.ok(["ws", "create", "drop"]);
      home.ok(["fs", "write", "/a.md", "-w", "keep", "--content", "the kitten sleeps\n"]);
      home.ok(["fs", "write", "/b.md", "-w", "drop", "--content", "the payment is late\n"]);
      home.ok(["ws", "delete", "drop"]);
      expect(home.json<{ index_pruned?: unknown }>(["gc", "--grace", "0"]).index_pruned).toBeUndefined();
      expect(existsSync(join(home.home, "afs.index.db"))).toBe(false);

      home.ok(["ws", "create", "drop"]);
      home.ok(["fs", "write", "/b.md", "-w", "drop", "--content", "the payment is late\n"]);
      home.ok(["index", "build"]);
      expect(home.json<Status>(["index", "status"]).stored).toEqual({ blobs: 2, chunks: 2 });
      home.ok(["ws", "delete", "drop"]);
      expect(home.json(["gc", "--grace", "0"])).toMatchObject({
        blobs_deleted: 1,
        index_pruned: { text_blobs: 1, query_blobs: 1, chunks: 1, vectors: 0 },
      });
      const status = home.json<Status>(["index", "status"]);
      expect(status.stored).toEqual({ blobs: 1, chunks: 1 });
      expect(status.text.texts).toBe(1);
      expect(home.ok(["gc", "--grace", "0"])).toMatch(
        /\nindex: pruned 0 contents from grep's index, 0 contents \(0 chunks\) and 0 vectors from the query index\n$/,
      );
      expect(home.json<{ results: { path: string }[] }>(["fs", "query", "kitten", "-w", "keep"]).results).toMatchObject(
        [{ path: "/a.md" }],
      );
    } finally {
      await home.cleanup();
    }
  });
});

// util-linux `script` gives the CLI a terminal, the only place a progress bar may appear.
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe("afs index progress", () => {
  it.skipIf(!hasScript)("draws a bar on a terminal while building", () => {
    const out = spawnSync(
      "script",
      ["-qec", [process.execPath, MAIN, "index", "rebuild"].map((a) => `'${a}'`).join(" "), "/dev/null"],
      { env: afs.env },
    ).stdout.toString();
    expect(out).toContain("chunking [");
    expect(out).toMatch(/chunks: \d+ contents chunked/);
  });
});
