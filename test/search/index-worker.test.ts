// The content index builder's worker thread (workspace/index-worker.ts), on a SQLite store: the index
// it builds holds what one built in the main thread holds (rows, block filters and bands, and each
// trigram token's texts), and grep answers from it as a scan does; a corrupt blob fails the build
// with the store's own error, as in the main thread, leaving no builder's claim behind; the CLI's
// builder (the bundle in dist/, which finds the worker's script beside it) uses it and exits.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { Hash } from "../../src/core/hash.js";
import { grep } from "../../src/ops/index.js";
import { BANDS } from "../../src/search/block-filters.js";
import { decodeLists } from "../../src/search/postings.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { buildContentIndex } from "../../src/workspace/index-builder.js";
import { RowsWorker } from "../../src/workspace/index-rows-worker.js";
import { cli, ensureBuilt } from "../cli/run.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempDir } from "../helpers/tmp.js";

/** A deterministic pseudo-random word list, so two homes get the same bytes. */
function words(seed: number, n: number): string {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(`w${(x >>> 8).toString(36)}`);
    if (i % 9 === 8) out.push("\n");
  }
  return out.join(" ");
}

/** Every kind of blob the index tells apart: short, ASCII, not, of several blocks and of many (banded), binary, empty, repeated. */
function files(): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let i = 0; i < 120; i++) out.set(`/small/f${i}.txt`, Buffer.from(`${words(i, 40)}\nzzq_rare ${i % 17 === 3}\n`));
  // The same contents again (one row each), under other names.
  for (let i = 0; i < 10; i++) out.set(`/copy/f${i}.txt`, Buffer.from(`${words(i, 40)}\nzzq_rare ${i % 17 === 3}\n`));
  out.set("/utf8.txt", Buffer.from("naïve café Straße ſtop \u212aelvin 日本語のテキスト zzq_rare\n".repeat(3)));
  out.set("/blocks.txt", Buffer.from(`${words(7, 30_000)}\nzzq_rare in a corner\n${words(8, 3000)}`));
  out.set("/banded.txt", Buffer.from(`${words(9, 200_000)}\nzzq_rare deep inside\n${words(10, 1000)}`));
  out.set("/wide-blocks.txt", Buffer.from(`${"größe ñandú ".repeat(6000)}\n${words(11, 20_000)}\nzzq_rare ünter\n`));
  out.set("/bin.dat", Buffer.from("zzq_rare\0\x01\x02"));
  out.set("/big.bin", Buffer.concat([Buffer.from([0, 1, 2]), Buffer.alloc(20_000, 7)]));
  out.set("/empty.txt", Buffer.alloc(0));
  out.set("/two.txt", Buffer.from("ab"));
  return out;
}

/** What an index file holds, by content hash (row ids differ between builds). */
function contents(home: string): Record<string, unknown> {
  const db = new Database(join(home, "afs.index.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT hash, state, bytes, blocks FROM text_blobs ORDER BY hash").all();
    const blooms = db
      .prepare(
        "SELECT b.hash, hex(t.blooms) AS blooms, hex(t.lines) AS lines FROM text_blooms t JOIN text_blobs b ON b.id = t.id ORDER BY b.hash",
      )
      .all();
    const bands = db
      .prepare(
        "SELECT b.hash, t.key - b.id * ? AS band, hex(t.bits) AS bits FROM text_bands t JOIN text_blobs b ON t.key / ? = b.id ORDER BY 1, 2",
      )
      .all(BANDS, BANDS);
    // Each key's texts: the posting lists of every segment, compared whole.
    const hashOf = new Map(
      (db.prepare("SELECT id, hash FROM text_blobs").all() as { id: number; hash: Hash }[]).map((r) => [r.id, r.hash]),
    );
    const lists = new Map<number, Uint8Array[]>();
    const rowsInOrder = db
      .prepare(
        "SELECT p.key % 4194304 AS gram, p.ids FROM text_segments s JOIN text_postings p ON p.key / 4194304 = s.seg ORDER BY s.first",
      )
      .all() as { gram: number; ids: Buffer }[];
    for (const { gram, ids } of rowsInOrder) lists.set(gram, [...(lists.get(gram) ?? []), ids]);
    const postings: Record<number, string[]> = {};
    for (const gram of [...lists.keys()].sort((x, y) => x - y)) {
      postings[gram] = [...decodeLists(lists.get(gram) as Uint8Array[])].map((id) => hashOf.get(id) as string).sort();
    }
    return { rows, blooms, bands, postings };
  } finally {
    db.close();
  }
}

describe("the content index builder's worker thread", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function home(env: Record<string, string>): Promise<{ afs: Afs; dir: string }> {
    const dir = await tempDir("afs-home-");
    cleanups.push(dir.cleanup);
    const afs = await Afs.open({
      home: dir.dir,
      store: `sqlite:${dir.dir}/afs.db`,
      actor: "test",
      env: { ...process.env, ...env },
    });
    cleanups.push(() => afs.close());
    await afs.workspaces.create("a");
    const volume = await afs.workspaces.volume("a");
    for (const [path, data] of files()) await volume.writeFile(path, data, { op: "write" });
    await afs.checkpoints.create("a", { name: "one" });
    return { afs, dir: dir.dir };
  }

  it("builds the index the main thread builds, and grep answers from it as a scan does", async () => {
    const inWorker = await home({ AFS_INDEX_WORKERS: "1" });
    const inProcess = await home({ AFS_INDEX_WORKERS: "0" });
    const started = RowsWorker.started;
    const built = await inWorker.afs.indexes.buildInBackground(process.pid);
    expect(RowsWorker.started).toBe(started + 1);
    const builtHere = await inProcess.afs.indexes.buildInBackground(process.pid);
    expect(RowsWorker.started).toBe(started + 1);
    expect(built).toMatchObject({ files: builtHere?.files, indexed: builtHere?.indexed, bytes: builtHere?.bytes });
    expect(built?.indexed).toBeGreaterThan(120);

    const a = contents(inWorker.dir);
    const b = contents(inProcess.dir);
    // Every kind was met: several blocks, many (banded), wide tokens.
    expect((a.blooms as unknown[]).length).toBeGreaterThan(0);
    expect((a.bands as unknown[]).length).toBeGreaterThan(0);
    expect(Object.keys(a.postings as object).length).toBeGreaterThan(1000);
    expect(a).toEqual(b);

    const volume = await inWorker.afs.workspaces.volume("a");
    for (const pattern of ["zzq_rare", "café", "STRASSE", "kelvin", "ünter", "zzq_rare deep", "日本語"]) {
      for (const more of [{ files_with_matches: true }, { count: true }, {}]) {
        const args = { pattern, ignore_case: true, ...more };
        expect(await grep(volume, args, indexesOf(inWorker.afs)), pattern).toEqual(await grep(volume, args));
      }
    }
  });

  it("builds the same index in many small batches, more than the worker's queue holds", async () => {
    // Batches of 4 KiB: dozens, so the main thread waits on the worker's queue and writes as the
    // rows come, with contents met again in a later batch before the first is written.
    const built: Record<string, unknown>[] = [];
    // Two workers answer batches out of order; they are written in the order sent.
    for (const [workers, count] of [
      [true, "2"],
      [true, "1"],
      [false, "0"],
    ] as const) {
      const { afs, dir } = await home({ AFS_INDEX_WORKERS: count });
      const engine = { store: internalsOf(afs).store, search: { text: afs.indexes.text } };
      const progress: number[] = [];
      const result = await buildContentIndex(
        engine as unknown as Parameters<typeof buildContentIndex>[0],
        process.pid,
        (done) => progress.push(done),
        undefined,
        { workers, batchBytes: 4096 },
      );
      expect(result?.indexed).toBeGreaterThan(120);
      expect(progress.length).toBeGreaterThan(10);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      built.push(contents(dir));
    }
    expect(built[0]).toEqual(built[2]);
    expect(built[1]).toEqual(built[2]);
  });

  it("fails on a corrupt blob with the store's error, as in the main thread, and leaves no claim", async () => {
    const messages: string[] = [];
    for (const workers of ["1", "0"]) {
      const { afs, dir } = await home({ AFS_INDEX_WORKERS: workers });
      const hash = (await (await afs.workspaces.volume("a")).stat("/small/f5.txt"))?.sha256 as Hash;
      const store = new Database(join(dir, "afs.db"));
      // Shorter than its size: read as a deflate stream, which this is not.
      store.prepare("UPDATE blobs SET data = x'0badc0ffee' WHERE hash = ?").run(hash);
      store.close();
      const error = await afs.indexes.buildInBackground(process.pid).then(
        () => null,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(error?.code).toBe("IO_ERROR");
      expect(error?.message).toMatch(/corrupt.*run afs fsck/);
      messages.push(error?.message ?? "");
      expect(afs.indexes.text.building()).toBeUndefined();
    }
    expect(messages[0]).toBe(messages[1]);
  });

  it("refuses an AFS_INDEX_WORKERS it does not know, saying what to set", async () => {
    for (const wrong of ["two", "9", "-1"]) {
      const { afs } = await home({ AFS_INDEX_WORKERS: wrong });
      await expect(afs.indexes.buildInBackground(process.pid)).rejects.toThrow(
        `AFS_INDEX_WORKERS is "${wrong}"; set it to 0 (index in the main thread) or a number of worker threads from 1 to 8`,
      );
    }
  });

  it("is used by the CLI's builder, which exits when done", async () => {
    ensureBuilt();
    const run = await cli();
    cleanups.push(run.cleanup);
    const tree = run.tmp("tree");
    for (const [path, data] of files()) {
      await mkdir(join(tree, path, ".."), { recursive: true });
      await writeFile(join(tree, path), data);
    }
    run.ok(["ws", "import", "a", tree]);
    // AFS_INDEX_WORKERS=1 fails the build if the bundle cannot find the worker's script; a worker
    // left running would keep the process from exiting (the run would time out).
    const env = { AFS_INDEX_WORKERS: "1", AFS_INDEX_BACKGROUND: "off", AFS_DAEMON: "off" };
    const built = run.run(["index", "builder"], { env });
    expect(built.stderr).toBe("");
    expect(built.status).toBe(0);
    const status = run.json<{ text: { texts: number; building?: unknown } }>(["index", "status"]);
    expect(status.text.building).toBeUndefined();
    expect(status.text.texts).toBeGreaterThan(120);
    const found = run.ok(["fs", "grep", "-l", "zzq_rare deep", "--workspace", "a"]);
    expect(found.trim()).toBe("/banded.txt");
  });
});
