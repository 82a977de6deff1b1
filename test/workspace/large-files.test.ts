// Large files through the engine: import/export round trips byte-exact at the chunk edges, fsck
// names the file content whose chunk is missing or corrupt, and gc sweeps chunks no file uses.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { Mount } from "../../src/mounts/mount.js";
import { CHUNK_BYTES } from "../../src/store/chunking.js";
import type { Afs } from "../../src/workspace/afs.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

const SIZES = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 2 * CHUNK_BYTES + 3];

describe("large files", () => {
  let afs: Afs;
  let home: string;
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const a = await tempAfs();
    const d = await tempDir();
    afs = a.afs;
    home = a.home;
    dir = d.dir;
    cleanup = async () => {
      await a.cleanup();
      await d.cleanup();
    };
  });
  afterEach(() => cleanup());

  async function importSizes(): Promise<Map<string, Buffer>> {
    const files = new Map(SIZES.map((size) => [`f${size}.bin`, randomBytes(size)]));
    await mkdir(join(dir, "src"));
    for (const [name, data] of files) await writeFile(join(dir, "src", name), data);
    await afs.workspaces.import("big", join(dir, "src"));
    return files;
  }

  it("round-trips files at 0, 1, chunk-1, chunk, chunk+1 bytes and several chunks, byte-exact", async () => {
    const files = await importSizes();
    await afs.workspaces.export("big", join(dir, "out"));
    for (const [name, data] of files) {
      expect((await readFile(join(dir, "out", name))).equals(data), name).toBe(true);
    }
    const volume = await afs.workspaces.volume("big");
    const last = files.get(`f${2 * CHUNK_BYTES + 3}.bin`) as Buffer;
    expect((await volume.readFile(`/f${2 * CHUNK_BYTES + 3}.bin`)).equals(last)).toBe(true);
    expect((await afs.maintenance.fsck()).problems).toEqual([]);
  });

  it("fsck names the content of a deleted chunk and of a corrupted one", async () => {
    const files = await importSizes();
    const data = files.get(`f${2 * CHUNK_BYTES + 3}.bin`) as Buffer;
    const chunk = (i: number): string => sha256(data.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES));
    const raw = new Database(join(home, "afs.db"));
    raw.prepare("DELETE FROM chunks WHERE hash = ?").run(chunk(0));
    raw.prepare("UPDATE chunks SET data = zeroblob(?) WHERE hash = ?").run(CHUNK_BYTES, chunk(1));
    raw.close();
    const result = await afs.maintenance.fsck();
    expect(result.ok).toBe(false);
    const about = (h: string) => result.problems.filter((p) => p.includes(h));
    expect(about(chunk(0)).some((p) => p.includes(sha256(data)) && /missing/.test(p))).toBe(true);
    expect(about(chunk(1)).some((p) => p.includes(sha256(data)) && /does not match/.test(p))).toBe(true);
  });

  it("gc sweeps the chunks of deleted files and keeps those still used", async () => {
    const files = await importSizes();
    await afs.workspaces.delete("big");
    await mkdir(join(dir, "keep"));
    const kept = files.get(`f${CHUNK_BYTES + 1}.bin`) as Buffer;
    await writeFile(join(dir, "keep", "k.bin"), kept);
    await afs.workspaces.import("keep", join(dir, "keep"));
    const gc = await afs.maintenance.gc({ graceMs: 0 });
    // f(2c+3) had 3 chunks; f(c+1)'s 2 stay with k.bin.
    expect(gc.chunks_deleted).toBe(3);
    expect(gc.chunk_bytes_freed).toBe(2 * CHUNK_BYTES + 3);
    await afs.workspaces.export("keep", join(dir, "out"));
    expect((await readFile(join(dir, "out", "k.bin"))).equals(kept)).toBe(true);
    expect((await afs.maintenance.fsck()).problems).toEqual([]);
  });

  it("uploads a large file changed in a mounted directory by streaming it", async () => {
    const project = join(dir, "project");
    await mkdir(project);
    const first = randomBytes(2 * CHUNK_BYTES + 5);
    await writeFile(join(project, "data.bin"), first);
    const mount = await Mount.start(afs, { workspace: "proj", dir: project });
    const second = Buffer.concat([first.subarray(0, CHUNK_BYTES), randomBytes(CHUNK_BYTES + 9)]);
    try {
      const before = mount.status().uploaded;
      await writeFile(join(project, "data.bin"), second);
      expect((await mount.flush()).uploaded - before).toBe(1);
    } finally {
      await mount.stop();
    }
    await afs.workspaces.export("proj", join(dir, "out"));
    expect((await readFile(join(dir, "out", "data.bin"))).equals(second)).toBe(true);
    expect((await afs.maintenance.fsck()).problems).toEqual([]);
  });
});
