// `afs gc --repack` end to end on a SQLite store whose large text contents were written in the
// format before seekable values (one deflate stream), as an older afs left them: they are
// re-encoded, reported, read back unchanged, and a second run finds nothing to do.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytes } from "../../src/cli/output.js";
import { sha256 } from "../../src/core/hash.js";
import { encode } from "../../src/store/blob-codec.js";
import { CHUNK_BYTES } from "../../src/store/chunking.js";
import { type Cli, cli, ensureBuilt } from "./run.js";

/** Numbered source lines, about `size` bytes of them. */
function source(size: number, seed: number): Buffer {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < size; i++) {
    const line = `export const v${seed}_${i} = ${(i * 2654435761 + seed) % 1000003};\n`;
    lines.push(line);
    n += line.length;
  }
  return Buffer.from(lines.join(""));
}

interface Repacked {
  values: number;
  bytes_before: number;
  bytes_after: number;
}

describe("afs gc --repack", () => {
  let afs: Cli;
  const inline = source(300_000, 1);
  const chunked = source(CHUNK_BYTES + 500_000, 2);
  const chunks = [chunked.subarray(0, CHUNK_BYTES), chunked.subarray(CHUNK_BYTES)];
  /** Each old value: its table, hash, content and the one deflate stream an older afs stored. */
  const old = [{ table: "blobs", content: inline }, ...chunks.map((content) => ({ table: "chunks", content }))].map(
    (v) => ({ ...v, hash: sha256(v.content), stored: deflateRawSync(v.content, { level: 1 }) }),
  );

  beforeAll(async () => {
    ensureBuilt();
    afs = await cli();
    const dir = afs.tmp("tree");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "inline.ts"), inline);
    await writeFile(join(dir, "chunked.ts"), chunked);
    await writeFile(join(dir, "small.ts"), "export const small = 1;\n");
    afs.ok(["ws", "import", "demo", dir]);
    afs.ok(["ws", "use", "demo"]);
    const db = new Database(join(afs.home, "afs.db"));
    try {
      for (const v of old) {
        const { changes } = db.prepare(`UPDATE ${v.table} SET data = ? WHERE hash = ?`).run(v.stored, v.hash);
        expect(changes, `${v.table} ${v.hash}`).toBe(1);
      }
    } finally {
      db.close();
    }
  }, 120_000);
  afterAll(async () => {
    await afs?.cleanup();
  });

  it("leaves old values alone without --repack", () => {
    expect(afs.json<{ repacked?: Repacked }>(["gc", "--grace", "0"]).repacked).toBeUndefined();
  });

  it("re-encodes old values and reports how many and their bytes before and after", () => {
    const before = old.reduce((n, v) => n + v.stored.byteLength, 0);
    const after = old.reduce((n, v) => n + encode(v.content).byteLength, 0);
    const out = afs.ok(["gc", "--grace", "0", "--repack"]).split("\n");
    expect(out.at(-2)).toBe(`repacked 3 values (${bytes(before)} → ${bytes(after)})`);

    const db = new Database(join(afs.home, "afs.db"), { readonly: true });
    try {
      for (const v of old) {
        const stored = db.prepare(`SELECT data FROM ${v.table} WHERE hash = ?`).pluck().get(v.hash) as Buffer;
        expect(stored.equals(encode(v.content)), `${v.table} ${v.hash}`).toBe(true);
      }
    } finally {
      db.close();
    }
  });

  it("reads the repacked contents back unchanged, and fsck passes", () => {
    expect(afs.run(["fs", "cat", "/inline.ts"]).raw.equals(inline)).toBe(true);
    expect(afs.run(["fs", "cat", "/chunked.ts"]).raw.equals(chunked)).toBe(true);
    const lines = chunked.toString().split("\n");
    expect(afs.ok(["fs", "lines", "/chunked.ts", "70000", "70002"])).toBe(
      `${lines.slice(69_999, 70_002).join("\n")}\n`,
    );
    expect(afs.json<{ ok: boolean }>(["fsck"]).ok).toBe(true);
  });

  it("finds nothing to repack the second time", () => {
    const second = afs.json<{ repacked?: Repacked }>(["gc", "--grace", "0", "--repack"]);
    expect(second.repacked).toEqual({ values: 0, bytes_before: 0, bytes_after: 0 });
    expect(afs.ok(["gc", "--repack"])).toMatch(/\nrepacked 0 values \(0 B → 0 B\)\n$/);
  });
});
