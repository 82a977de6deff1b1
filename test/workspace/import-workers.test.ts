// The import's worker threads (AFS_IMPORT_WORKERS) change nothing stored: a tree imported with
// workers and without has the same root and byte-identical stored values (the workers' deflate is
// the store's own), over empty, binary, incompressible, seekable (> 64 KiB; > 256 KiB: read by the
// main thread's window without workers) and chunked (> 4 MiB, streamed on the main thread) files, a
// symlink, executables and ignored files, across many batches and one partial batch read on the
// main thread. A broken worker or an unreadable file is a clear AfsError.
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AfsError, toAfsError } from "../../src/core/errors.js";
import { Afs } from "../../src/workspace/afs.js";
import { encodeFiles, failureError, fileOf } from "../../src/workspace/import-batch.js";
import { ImportPool, importWorkersFrom } from "../../src/workspace/import-pool.js";
import { ensureBuilt, MAIN } from "../cli/run.js";
import { tempDir } from "../helpers/tmp.js";

/** More than a few worker batches (256 files each), and not a multiple of one. */
const SMALL_FILES = 1300;
let src: { dir: string; cleanup: () => Promise<void> };
let scratch: { dir: string; cleanup: () => Promise<void> };

/** Deterministic noise: does not deflate by 10%, so it is stored raw. */
function noise(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

beforeAll(async () => {
  src = await tempDir("afs-import-workers-src-");
  scratch = await tempDir("afs-import-workers-");
  const at = (p: string) => join(src.dir, p);
  for (const d of ["a/b", "bin", "many/x", "many/y", "node_modules/pkg"]) mkdirSync(at(d), { recursive: true });
  writeFileSync(at(".gitignore"), "node_modules/\n*.log\n");
  writeFileSync(at("node_modules/pkg/index.js"), "ignored\n");
  writeFileSync(at("debug.log"), "ignored\n");
  writeFileSync(at("a/empty.txt"), "");
  writeFileSync(at("a/b/tiny.txt"), "x");
  writeFileSync(at("a/run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  symlinkSync("b/tiny.txt", at("a/link"));
  writeFileSync(at("bin/zeros.bin"), Buffer.alloc(100_000));
  writeFileSync(at("bin/noise.bin"), noise(200_000, 7));
  writeFileSync(at("bin/nul-text.bin"), Buffer.concat([Buffer.from("head\0"), Buffer.from("word ".repeat(20_000))]));
  writeFileSync(at("seekable.txt"), "a line of text that repeats\n".repeat(5_000)); // ~140 KiB, segmented
  writeFileSync(at("windowed.txt"), "a longer file, read through the window\n".repeat(10_000)); // ~390 KiB
  writeFileSync(at("bin/chunked.bin"), noise(4 * 1024 * 1024 + 100, 9));
  for (let i = 0; i < SMALL_FILES; i++) {
    const body = i % 7 === 0 ? noise(100 + i, i) : Buffer.from(`file ${i}\n${"text ".repeat(i % 50)}\n`);
    writeFileSync(at(`many/${i % 2 ? "x" : "y"}/f${i}.txt`), body);
  }
});
afterAll(async () => {
  await src?.cleanup();
  await scratch?.cleanup();
});

const freshHome = (tag: string): string => join(scratch.dir, `home-${tag}-${Math.random().toString(36).slice(2)}`);

/** Imports `dir` into a fresh SQLite store with AFS_IMPORT_WORKERS=`workers`; the root, and every stored blob row. */
async function importWith(workers: string, dir = src.dir): Promise<{ root: string; files: number; blobs: unknown[] }> {
  const home = freshHome(workers);
  const afs = await Afs.open({ home, actor: "test", env: { AFS_IMPORT_WORKERS: workers } });
  let files: number;
  try {
    files = (await afs.workspaces.import("t", dir)).files;
  } finally {
    await afs.close();
  }
  return { ...(await stored(home)), files };
}

/** The head root of workspace "t" in `home`, and every stored blob row. */
async function stored(home: string): Promise<{ root: string; blobs: unknown[] }> {
  const db = new Database(join(home, "afs.db"), { readonly: true });
  try {
    const root = (await rootOf(home)) as string;
    const blobs = db.prepare("SELECT hash, size, hex(data) AS data FROM blobs ORDER BY hash").all();
    return { root, blobs };
  } finally {
    db.close();
  }
}

async function rootOf(home: string): Promise<string | undefined> {
  const afs = await Afs.open({ home, actor: "test" });
  try {
    return (await afs.checkpoints.list("t"))[0]?.root;
  } finally {
    await afs.close();
  }
}

describe("import with worker threads", () => {
  it("stores exactly what an import on the main thread stores", { timeout: 120_000 }, async () => {
    const main = await importWith("0");
    const pooled = await importWith("2");
    const one = await importWith("1");
    expect(main.files).toBe(SMALL_FILES + 10);
    expect(pooled.files).toBe(main.files);
    expect(pooled.root).toBe(main.root);
    expect(one.root).toBe(main.root);
    // Byte for byte: same hashes, sizes and stored values (raw, one deflate stream or segmented).
    expect(pooled.blobs.length).toBe(main.blobs.length);
    expect(pooled.blobs).toEqual(main.blobs);
    expect(one.blobs).toEqual(main.blobs);
  });

  it("finds its worker script from dist/ (the CLI's bundle), storing the same", { timeout: 240_000 }, async () => {
    ensureBuilt();
    const home = freshHome("cli");
    const env: NodeJS.ProcessEnv = { ...process.env, AFS_HOME: home, AFS_IMPORT_WORKERS: "2", AFS_DAEMON: "off" };
    delete env.AFS_STORE;
    const r = spawnSync(process.execPath, [MAIN, "ws", "import", "t", src.dir], { env, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`imported ${SMALL_FILES + 10} files`);
    const viaCli = await stored(home);
    const main = await importWith("0");
    expect(viaCli.root).toBe(main.root);
    expect(viaCli.blobs).toEqual(main.blobs);
  });

  it("imports a tree smaller than one batch (read on the main thread, no threads started)", async () => {
    const small = join(scratch.dir, "small");
    mkdirSync(small);
    writeFileSync(join(small, "a.txt"), "hello\n".repeat(100));
    writeFileSync(join(small, "b.bin"), noise(3000, 3));
    const main = await importWith("0", small);
    const pooled = await importWith("2", small);
    expect(pooled.root).toBe(main.root);
    expect(pooled.blobs).toEqual(main.blobs);
  });

  it("refuses a bad AFS_IMPORT_WORKERS, saying what it takes", () => {
    expect(importWorkersFrom({ AFS_IMPORT_WORKERS: "3" })).toBe(3);
    expect(importWorkersFrom({})).toBeGreaterThanOrEqual(1);
    for (const bad of ["-1", "two", "1.5", "65"]) {
      const err = (() => {
        try {
          importWorkersFrom({ AFS_IMPORT_WORKERS: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(AfsError);
      expect((err as AfsError).code).toBe("INVALID_ARGUMENT");
      expect((err as AfsError).message).toMatch(/AFS_IMPORT_WORKERS must be a whole number from 0 to 64/);
    }
  });

  it("turns a worker thread that fails into an AfsError that says how to import without one", async () => {
    const script = join(scratch.dir, "broken-worker.mjs");
    writeFileSync(script, 'throw new Error("worker exploded");\n');
    const pool = new ImportPool(1, { url: new URL(`file://${script}`) });
    try {
      const err = await pool.run([join(src.dir, "a/b/tiny.txt")]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AfsError);
      expect((err as AfsError).code).toBe("INTERNAL");
      expect((err as AfsError).message).toMatch(/import worker thread failed: worker exploded.*AFS_IMPORT_WORKERS=0/);
    } finally {
      await pool.close();
    }
  });

  it("reports a file that cannot be read as that file's error, the rest of its batch intact", () => {
    const batch = encodeFiles([join(src.dir, "a/b/tiny.txt"), join(src.dir, "gone.txt"), join(src.dir, "a/empty.txt")]);
    const gone = fileOf(batch, 1);
    expect("message" in gone && toAfsError(failureError(gone)).code).toBe("NOT_FOUND");
    const tiny = fileOf(batch, 0);
    const empty = fileOf(batch, 2);
    expect("data" in tiny && tiny.data.toString()).toBe("x");
    expect("data" in empty && empty.data.byteLength).toBe(0);
  });
});
