// The directory volume's own additions to Volume: remembered whole-file hashes and realPath.
import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers/tmp.js";
import { sha256 } from "../../core/hash.js";
import { withOpenFile } from "../volume.js";
import { LocalDirVolume } from "./local-dir-volume.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe("LocalDirVolume whole-file hashes", () => {
  it("gives an opened file's hash, remembered per version: a change in place or a replacement is hashed anew", async () => {
    const { dir, cleanup } = await tempDir("afs-hash-");
    cleanups.push(cleanup);
    const volume = await LocalDirVolume.open(dir);
    const hashOf = () => withOpenFile(volume, "/a.txt", (f) => f.hash());
    await writeFile(join(dir, "a.txt"), "one\n");
    expect(await hashOf()).toBe(sha256("one\n"));
    expect(await hashOf()).toBe(sha256("one\n"));
    // Same size, written in place by another program, with a later mtime.
    await writeFile(join(dir, "a.txt"), "two\n");
    const later = new Date(Date.now() + 5_000);
    await utimes(join(dir, "a.txt"), later, later);
    expect(await hashOf()).toBe(sha256("two\n"));
    // Replaced atomically through the volume (a new inode).
    await volume.writeFile("/a.txt", Buffer.from("six\n"), { op: "write" });
    expect(await hashOf()).toBe(sha256("six\n"));
    // An empty file and a large one (hashed in pieces).
    await writeFile(join(dir, "empty"), "");
    expect(await withOpenFile(volume, "/empty", (f) => f.hash())).toBe(sha256(""));
    const big = Buffer.alloc(9 * 1024 * 1024, 7);
    await writeFile(join(dir, "big"), big);
    expect(await withOpenFile(volume, "/big", (f) => f.hash())).toBe(sha256(big));
  });

  it("says where a path really lands, and refuses one that leads out", async () => {
    const { dir, cleanup } = await tempDir("afs-real-");
    cleanups.push(cleanup);
    const volume = await LocalDirVolume.open(dir);
    await mkdir(join(dir, "real"));
    await symlink("real", join(dir, "alias"));
    await symlink("/etc", join(dir, "out"));
    expect(await volume.realPath("/alias/f.txt")).toBe("/real/f.txt");
    expect(await volume.realPath("/alias", { entry: true })).toBe("/alias");
    expect(await volume.realPath("/out", { entry: true })).toBe("/out");
    await expect(volume.realPath("/out/passwd")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });
});
