// The operations' contract on a plain directory, plus what only a directory on disk can get wrong:
// symlinks and paths that would reach outside the root.
import { existsSync } from "node:fs";
import { mkdir as mkdirFs, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { createExclusive, glob, grep, list, read, remove, rename, replace, write } from "../../src/ops/index.js";
import { LocalDirVolume } from "../../src/volume/local-dir/local-dir-volume.js";
import { tempDir } from "../helpers/tmp.js";
import { opsContract } from "./ops-contract.js";

opsContract("LocalDirVolume", async () => {
  const { dir, cleanup } = await tempDir("afs-local-");
  return { volume: await LocalDirVolume.open(dir, { actor: "test" }), cleanup };
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? "(no code)";
  }
  throw new Error("expected the operation to fail, but it succeeded");
}

describe("LocalDirVolume confinement", () => {
  let root: string;
  let outside: string;
  let volume: LocalDirVolume;
  const cleanups: (() => Promise<void>)[] = [];

  beforeEach(async () => {
    const a = await tempDir("afs-root-");
    const b = await tempDir("afs-outside-");
    cleanups.push(a.cleanup, b.cleanup);
    root = a.dir;
    outside = b.dir;
    await writeFile(join(outside, "secret.txt"), "secret\n");
    volume = await LocalDirVolume.open(root);
  });
  afterEach(async () => {
    for (const fn of cleanups.splice(0)) await fn();
  });

  it("refuses a symlinked directory that leads to /etc, for reads and writes", async () => {
    await symlink("/etc", join(root, "etc"));
    expect(await codeOf(read(volume, { path: "/etc/passwd" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(volume.readFile("/etc/hostname"))).toBe("PERMISSION_DENIED");
    expect(await codeOf(volume.list("/etc"))).toBe("PERMISSION_DENIED");
    expect(await codeOf(glob(volume, { path: "/etc/ssl", pattern: "*" }))).toBe("PERMISSION_DENIED");
    // list names a symlink rather than following it.
    expect((await list(volume, { path: "/etc" })).items).toMatchObject([{ path: "/etc", kind: "symlink" }]);
    expect(await codeOf(write(volume, { path: "/etc/afs-should-not-exist", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(existsSync("/etc/afs-should-not-exist")).toBe(false);
    // The link itself is inside the root and may be looked at.
    expect(await read(volume, { path: "/etc" })).toMatchObject({ kind: "symlink", target: "/etc" });
  });

  it("refuses a symlinked file that leads into a sibling directory", async () => {
    await symlink(join(outside, "secret.txt"), join(root, "leak.txt"));
    await symlink(`../${outside.split("/").pop()}/secret.txt`, join(root, "relative-leak.txt"));
    for (const path of ["/leak.txt", "/relative-leak.txt"]) {
      expect(await codeOf(volume.readFile(path))).toBe("PERMISSION_DENIED");
      expect(await codeOf(volume.openFile(path))).toBe("PERMISSION_DENIED");
      expect(await codeOf(write(volume, { path, content: "pwned" }))).toBe("PERMISSION_DENIED");
      expect(await codeOf(replace(volume, { path, old: "secret", new: "pwned" }))).toBe("PERMISSION_DENIED");
    }
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    const message = await volume.readFile("/leak.txt").catch((e: Error) => e.message);
    expect(message).toContain("/leak.txt");
    expect(message).not.toContain(outside);
  });

  it("refuses a new file under a symlinked directory that leads outside", async () => {
    await symlink(outside, join(root, "out"));
    expect(await codeOf(write(volume, { path: "/out/new.txt", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(write(volume, { path: "/out/sub/dir/new.txt", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(createExclusive(volume, { path: "/out/claim", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(volume.mkdir("/out/newdir"))).toBe("PERMISSION_DENIED");
    expect((await readdir(outside)).sort()).toEqual(["secret.txt"]);
  });

  it("refuses writes through a dangling symlink that points outside", async () => {
    await symlink(join(outside, "not-yet.txt"), join(root, "dangling.txt"));
    await symlink(join(outside, "no-dir"), join(root, "dangling-dir"));
    expect(await codeOf(write(volume, { path: "/dangling.txt", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(write(volume, { path: "/dangling-dir/f.txt", content: "x" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(createExclusive(volume, { path: "/dangling.txt", content: "x" }))).toBe("ALREADY_EXISTS");
    expect((await readdir(outside)).sort()).toEqual(["secret.txt"]);
  });

  it("refuses paths with NUL bytes and .. escapes", async () => {
    expect(await codeOf(volume.readFile("/a\0b"))).toBe("INVALID_PATH");
    expect(await codeOf(volume.writeFile("/x\0/../y", Buffer.from("x"), { op: "write" }))).toBe("INVALID_PATH");
    expect(await codeOf(volume.readFile(`/../${outside.split("/").pop()}/secret.txt`))).toBe("INVALID_PATH");
    expect(await codeOf(write(volume, { path: "../escape.txt", content: "x" }))).toBe("INVALID_PATH");
  });

  it("refuses a rename whose target escapes, leaving the source in place", async () => {
    await symlink(outside, join(root, "out"));
    await write(volume, { path: "/a.txt", content: "A" });
    expect(await codeOf(rename(volume, { path: "/a.txt", new_path: "/out/a.txt" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(rename(volume, { path: "/out/secret.txt", new_path: "/stolen.txt" }))).toBe(
      "PERMISSION_DENIED",
    );
    expect(await readFile(join(root, "a.txt"), "utf8")).toBe("A");
    expect((await readdir(outside)).sort()).toEqual(["secret.txt"]);
  });

  it("moves and deletes a symlink itself, never what it points to", async () => {
    await symlink(join(outside, "secret.txt"), join(root, "link"));
    await rename(volume, { path: "/link", new_path: "/moved-link" });
    expect(await readlink(join(root, "moved-link"))).toBe(join(outside, "secret.txt"));
    await remove(volume, { path: "/moved-link" });
    expect(existsSync(join(root, "moved-link"))).toBe(false);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
  });

  it("follows symlinks that stay inside the root, writing through them", async () => {
    await mkdirFs(join(root, "real"));
    await writeFile(join(root, "real", "f.txt"), "inside\n");
    await symlink("real", join(root, "alias"));
    await symlink("real/../real/f.txt", join(root, "f-link.txt"));
    expect((await read(volume, { path: "/alias/f.txt" })).content).toBe("inside\n");
    const opened = await volume.openFile("/f-link.txt");
    expect((await opened.read(0, 100)).toString()).toBe("inside\n");
    await opened.close();
    expect(await read(volume, { path: "/f-link.txt" })).toMatchObject({
      kind: "symlink",
      target: "real/../real/f.txt",
    });
    const r = await replace(volume, { path: "/f-link.txt", old: "inside", new: "edited" });
    expect(r.path).toBe("/real/f.txt");
    expect(await readFile(join(root, "real", "f.txt"), "utf8")).toBe("edited\n");
    expect(await readlink(join(root, "f-link.txt"))).toBe("real/../real/f.txt");
    await write(volume, { path: "/alias/new.txt", content: "new" });
    expect(await readFile(join(root, "real", "new.txt"), "utf8")).toBe("new");
  });

  it("refuses a relative symlink that climbs out with ..", async () => {
    await symlink("..", join(root, "up"));
    const sibling = outside.split("/").pop() as string;
    expect(await codeOf(volume.readFile(`/up/${sibling}/secret.txt`))).toBe("PERMISSION_DENIED");
    expect(await codeOf(write(volume, { path: `/up/${sibling}/new.txt`, content: "x" }))).toBe("PERMISSION_DENIED");
    expect((await readdir(outside)).sort()).toEqual(["secret.txt"]);
  });

  it("does not follow symlinks while searching, so nothing outside leaks", async () => {
    await symlink(outside, join(root, "out"));
    await symlink(join(outside, "secret.txt"), join(root, "leak.txt"));
    await write(volume, { path: "/mine.txt", content: "not a secret\n" });
    const r = await grep(volume, { pattern: "secret" });
    expect(r).toEqual({ mode: "matches", matches: [{ path: "/mine.txt", line: 1, text: "not a secret" }] });
    expect((await glob(volume, { pattern: "*", kind: "any" })).items.map((i) => i.path)).toEqual([
      "/leak.txt",
      "/mine.txt",
      "/out",
    ]);
  });
});

describe("LocalDirVolume", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0)) await fn();
  });
  const fresh = async (): Promise<{ dir: string; volume: LocalDirVolume }> => {
    const { dir, cleanup } = await tempDir("afs-local-");
    cleanups.push(cleanup);
    return { dir, volume: await LocalDirVolume.open(dir, { actor: "tester" }) };
  };

  it("refuses a root that is missing or not a directory", async () => {
    const { dir } = await fresh();
    expect(await codeOf(LocalDirVolume.open(join(dir, "missing")))).toBe("NOT_FOUND");
    await writeFile(join(dir, "file"), "x");
    expect(await codeOf(LocalDirVolume.open(join(dir, "file")))).toBe("INVALID_ARGUMENT");
  });

  it("logs every mutation as an event; revision is its sequence number", async () => {
    const { volume } = await fresh();
    expect(volume.revision).toBe(0);
    const w = await write(volume, { path: "/a.txt", content: "a" });
    await write(volume, { path: "/a.txt", content: "b" });
    const mv = await rename(volume, { path: "/a.txt", new_path: "/b.txt" });
    expect(w.revision).toBe(1);
    expect(mv.revision).toBe(volume.revision);
    expect(volume.events().map((e) => [e.seq, e.op, e.path, e.oldHash, e.newHash, e.actor])).toEqual([
      [1, "write", "/a.txt", null, sha256("a"), "tester"],
      [2, "write", "/a.txt", sha256("a"), sha256("b"), "tester"],
      [3, "rename", "/a.txt", sha256("b"), null, "tester"],
      [4, "rename", "/b.txt", null, sha256("b"), "tester"],
    ]);
    expect(volume.events(3).map((e) => e.seq)).toEqual([4]);
  });

  it("keeps only the newest maxEvents events, while the revision keeps counting", async () => {
    const { dir } = await fresh();
    const volume = await LocalDirVolume.open(dir, { maxEvents: 2 });
    for (const content of ["a", "b", "c"]) await write(volume, { path: "/a.txt", content });
    expect(volume.revision).toBe(3);
    expect(volume.oldestSeq).toBe(2);
    expect(volume.events().map((e) => [e.seq, e.newHash])).toEqual([
      [2, sha256("b")],
      [3, sha256("c")],
    ]);
    expect(volume.events(2).map((e) => e.seq)).toEqual([3]);
  });

  it("writes atomically through a temp file that never shows up or stays behind", async () => {
    const { dir, volume } = await fresh();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => write(volume, { path: "/f.txt", content: `v${i}`.repeat(1000) })),
    );
    expect(await readdir(dir)).toEqual(["f.txt"]);
    expect((await list(volume, {})).items.map((i) => i.name)).toEqual(["f.txt"]);
  });

  it("keeps an existing file's mode when rewriting it", async () => {
    const { dir, volume } = await fresh();
    await writeFile(join(dir, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
    await replace(volume, { path: "/run.sh", old: "sh", new: "bash" });
    expect((await volume.stat("/run.sh"))?.mode).toBe(0o755);
  });
});
