// `afs gc` prunes the search indexes: rows of blobs the store no longer holds go (grep's trigram
// rows, chunks, their keyword rows, vectors no chunk needs), and every process, warm caches and
// all, still answers exactly afterwards, also when pruned row ids are handed out again.
import { existsSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { grep } from "../../src/ops/grep.js";
import { query } from "../../src/ops/query.js";
import { write } from "../../src/ops/write.js";
import { indexDbPath } from "../../src/store/index-db.js";
import type { Volume } from "../../src/volume/volume.js";
import { Afs } from "../../src/workspace/afs.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { writeTinyModel } from "../helpers/tiny-embedding-model.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

const EMBED_VARS = ["AFS_EMBED_PROVIDER", "AFS_EMBED_MODEL_DIR", "AFS_EMBED_BASE_URL", "OPENAI_API_KEY"];
const saved = Object.fromEntries(EMBED_VARS.map((k) => [k, process.env[k]]));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

const KEEP = {
  "/pets.md": "# Pets\n\nthe kitten and the puppy\n",
  "/money.md": "# Money\n\nthe invoice and the payment\n",
  "/sky.md": "# Sky\n\nrain and snow and wind\n",
};
const GONE = {
  "/sky.md": KEEP["/sky.md"],
  "/code.md": "# Code\n\nthe function and the compiler bug\n",
  "/storm.md": "# Storm\n\na storm with clouds and wind\n",
};

async function seed(volume: Volume, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) await write(volume, { path, content });
}

const grepFiles = async (home: Afs, volume: Volume, pattern: string): Promise<string[]> => {
  const r = await grep(volume, { pattern, files_with_matches: true }, indexesOf(home));
  return r.mode === "files" ? r.files : [];
};
const ranked = async (home: Afs, volume: Volume, q: string, mode: "keyword" | "semantic"): Promise<string[]> =>
  (await query(volume, { query: q, mode }, indexesOf(home))).results.map((r) => r.path);

/** What each process answers about the kept workspace: must not change with a prune. */
async function answers(home: Afs, volume: Volume) {
  return {
    wind: await grepFiles(home, volume, "wind"),
    the: await grepFiles(home, volume, "the "),
    payment: await ranked(home, volume, "invoice payment", "keyword"),
    kitten: await ranked(home, volume, "kitten fur", "semantic"),
  };
}

describe("gc prunes the search indexes", () => {
  let afs: Afs;
  let other: Afs;
  let home: string;
  beforeEach(async () => {
    const model = await tempDir("afs-tiny-model-");
    cleanups.push(model.cleanup);
    await writeTinyModel(model.dir);
    for (const k of EMBED_VARS) delete process.env[k];
    Object.assign(process.env, { AFS_EMBED_PROVIDER: "local", AFS_EMBED_MODEL_DIR: model.dir });
    const t = await tempAfs();
    cleanups.push(t.cleanup);
    ({ afs, home } = t);
    await afs.workspaces.create("alpha");
    await afs.workspaces.create("beta");
  });

  it("drops rows of deleted blobs only; warm processes answer exactly, also after ids are reused", async () => {
    await seed(await afs.workspaces.volume("alpha"), KEEP);
    await seed(await afs.workspaces.volume("beta"), GONE);
    await afs.indexes.build([], { embeddings: true });
    const before = await afs.indexes.status();
    expect(before.stored).toEqual({ blobs: 5, chunks: 5, vectors: 5 });
    expect(before.text.texts).toBe(5);

    // Another process (its own connection and caches), warmed on both workspaces.
    other = await Afs.open({ home, actor: "other" });
    cleanups.push(() => other.close());
    const alpha = await other.workspaces.volume("alpha");
    const beta = await other.workspaces.volume("beta");
    const expected = {
      wind: ["/sky.md"],
      the: ["/money.md", "/pets.md"],
      payment: ["/money.md"],
      kitten: ["/pets.md", "/money.md", "/sky.md"],
    };
    expect(await answers(other, alpha)).toEqual(expected);
    expect(await grepFiles(other, beta, "compiler")).toEqual(["/code.md"]);
    expect(await ranked(other, beta, "compiler", "keyword")).toEqual(["/code.md"]);

    await afs.workspaces.delete("beta");
    const gc = await afs.maintenance.gc({ graceMs: 0 });
    expect(gc.blobs_deleted).toBe(2);
    expect(gc.index_pruned).toEqual({ text_blobs: 2, query_blobs: 2, chunks: 2, vectors: 2 });
    const after = await afs.indexes.status();
    expect(after.stored).toEqual({ blobs: 3, chunks: 3, vectors: 3 });
    expect(after.text.texts).toBe(3);
    expect(await answers(other, alpha)).toEqual(expected);
    expect(await answers(afs, await afs.workspaces.volume("alpha"))).toEqual(expected);
    expect((await afs.maintenance.gc({ graceMs: 0 })).index_pruned).toEqual({
      text_blobs: 0,
      query_blobs: 0,
      chunks: 0,
      vectors: 0,
    });

    // New blobs take the pruned row ids; one of them is a pruned content again, which the warm
    // process had cached under its old id.
    const writer = await afs.workspaces.volume("alpha");
    await seed(writer, { "/new.md": "# Deploy\n\nthe server deploy\n", "/again.md": GONE["/code.md"] });
    expect(await grepFiles(afs, writer, "deploy")).toEqual(["/new.md"]);
    expect(await ranked(afs, writer, "deploy server", "keyword")).toEqual(["/new.md"]);
    expect(await grepFiles(other, alpha, "compiler")).toEqual(["/again.md"]);
    expect(await grepFiles(other, alpha, "deploy")).toEqual(["/new.md"]);
    expect(await ranked(other, alpha, "compiler", "keyword")).toEqual(["/again.md"]);
    expect(await ranked(other, alpha, "deploy", "keyword")).toEqual(["/new.md"]);
    expect((await answers(other, alpha)).wind).toEqual(["/sky.md"]);
    expect((await other.indexes.status()).stored).toEqual({ blobs: 5, chunks: 5, vectors: 5 });
  });

  it("does not create the index file just to prune it", async () => {
    await seed(await afs.workspaces.volume("beta"), GONE);
    await afs.workspaces.delete("beta");
    const gc = await afs.maintenance.gc({ graceMs: 0 });
    expect(gc.blobs_deleted).toBe(3);
    expect(gc.index_pruned).toBeUndefined();
    expect(existsSync(indexDbPath(afs.storeUrl, home))).toBe(false);
  });
});
