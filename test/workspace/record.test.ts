// Attaching a directory to a workspace and recording it: what a record sees (adds, edits, deletes,
// renames, symlinks, modes, ignore rules), what it does not read again, and what it commits.
import { chmod, mkdir, rename, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Afs } from "../../src/workspace/afs.js";
import { tempProject } from "../helpers/tmp.js";

let afs: Afs;
let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ afs, dir, cleanup } = await tempProject("My Project"));
});
afterEach(() => cleanup());

const OLD = new Date("2020-01-02T03:04:05Z");
/** Writes a file with an old mtime, so the racy-clean guard does not force a read. */
async function put(rel: string, content: string, mtime = OLD): Promise<void> {
  await mkdir(join(dir, rel, ".."), { recursive: true });
  await writeFile(join(dir, rel), content);
  await utimes(join(dir, rel), mtime, mtime);
}

let forks = 0;
/** The workspace's live state as the store holds it (through a fork): path → content, "<dir>", "-> target". */
async function live(name: string): Promise<Record<string, string>> {
  const copy = `copy-${forks++}`;
  await afs.workspaces.fork(name, copy);
  const v = await afs.workspaces.volume(copy);
  const out: Record<string, string> = {};
  for await (const s of v.walk("/")) {
    out[s.path] =
      s.kind === "dir" ? "<dir>" : s.kind === "symlink" ? `-> ${s.target}` : (await v.readFile(s.path)).toString();
  }
  await afs.workspaces.delete(copy);
  return out;
}

describe("attachDirectory", () => {
  it("creates the workspace from the directory, named after it", async () => {
    await put("a.txt", "one");
    const attached = await afs.attachments.attach(dir);
    expect(attached).toMatchObject({ workspace: "My-Project", created: true });
    expect(await afs.attachments.directory("My-Project")).toBe(attached.dir);
    expect(await live("My-Project")).toEqual({ "/a.txt": "one" });
    // Attaching again records instead.
    await put("b.txt", "two");
    const again = await afs.attachments.attach(dir);
    expect(again).toMatchObject({ workspace: "My-Project", created: false, record: { added: 1 } });
  });

  it("refuses a workspace attached elsewhere or an existing unattached one unless adopted", async () => {
    await afs.attachments.attach(dir, { workspace: "w" });
    const other = join(dir, "..", "other");
    await mkdir(other);
    await expect(afs.attachments.attach(other, { workspace: "w" })).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
    await expect(afs.attachments.attach(dir, { workspace: "x" })).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
    await afs.workspaces.create("plain");
    await expect(afs.attachments.attach(other, { workspace: "plain" })).rejects.toMatchObject({
      code: "ALREADY_EXISTS",
    });
    expect(await afs.attachments.attach(other, { workspace: "plain", adopt: true })).toMatchObject({ created: false });
    expect(await afs.attachments.detach("plain")).toBe(true);
    expect(await afs.attachments.directory("plain")).toBeNull();
    await expect(afs.attachments.record("plain")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("recordDirectory", () => {
  it("sees adds, edits, deletes, renames, symlinks, mode changes and ignore rules", async () => {
    await put("keep.txt", "keep");
    await put("src/a.ts", "a");
    await put("src/old.ts", "old");
    await put("gone/x.txt", "x");
    await put(".gitignore", "*.log\nbuild/\n");
    await afs.attachments.attach(dir, { workspace: "w" });
    expect(await afs.attachments.record("w")).toMatchObject({ added: 0, modified: 0, deleted: 0, hashed: 0 });

    await put("src/a.ts", "a2");
    await rename(join(dir, "src/old.ts"), join(dir, "src/new.ts"));
    await rm(join(dir, "gone"), { recursive: true });
    await put("fresh/deep/f.txt", "f");
    await symlink("keep.txt", join(dir, "link"));
    await chmod(join(dir, "keep.txt"), 0o755);
    await put("debug.log", "ignored");
    await put("build/out.js", "ignored");
    await put("src/.afsignore", "secret.ts\n");
    await put("src/secret.ts", "ignored too");
    const r = await afs.attachments.record("w");
    expect(r).toMatchObject({ added: 4, modified: 2, deleted: 2 });
    expect(await live("w")).toEqual({
      "/.gitignore": "*.log\nbuild/\n",
      "/fresh": "<dir>",
      "/fresh/deep": "<dir>",
      "/fresh/deep/f.txt": "f",
      "/keep.txt": "keep",
      "/link": "-> keep.txt",
      "/src": "<dir>",
      "/src/.afsignore": "secret.ts\n",
      "/src/a.ts": "a2",
      "/src/new.ts": "old",
    });
    const stat = await (await afs.workspaces.volume("w")).stat("/keep.txt");
    expect(stat?.mode).toBe(0o755);
    // A second record finds nothing and commits nothing.
    const rev = (await afs.workspaces.get("w")).revision;
    expect(await afs.attachments.record("w")).toMatchObject({ added: 0, modified: 0, deleted: 0, revision: rev });
    // Un-ignoring brings the file in; the ignore file's change stands for its whole directory.
    await rm(join(dir, "src/.afsignore"));
    expect(await afs.attachments.record("w", { paths: ["/src/.afsignore"] })).toMatchObject({ added: 1, deleted: 1 });
    expect((await live("w"))["/src/secret.ts"]).toBe("ignored too");
  });

  it("judges files by size and mtime: unchanged files are not read again", async () => {
    for (let i = 0; i < 20; i++) await put(`f${i}.txt`, `content ${i}`);
    await afs.attachments.attach(dir, { workspace: "w" });
    expect(await afs.attachments.record("w")).toMatchObject({ examined: 20, hashed: 0 });
    await put("f3.txt", "changed three");
    expect(await afs.attachments.record("w")).toMatchObject({ examined: 20, hashed: 1, modified: 1 });
    // The trade-off, as in git: new bytes of the same size under a restored mtime go unseen.
    await put("f4.txt", "CONTENT 4");
    expect(await afs.attachments.record("w")).toMatchObject({ hashed: 0, modified: 0 });
    expect((await live("w"))["/f4.txt"]).toBe("content 4");
    // Named paths (a watcher saw them change) are always read.
    expect(await afs.attachments.record("w", { paths: ["/f4.txt"] })).toMatchObject({ hashed: 1, modified: 1 });
    // A touch reads the file once, finds the same bytes, and is trusted afterwards.
    const now = new Date();
    await utimes(join(dir, "f5.txt"), now, new Date(Date.now() - 10_000));
    expect(await afs.attachments.record("w")).toMatchObject({ hashed: 1, modified: 0 });
    expect(await afs.attachments.record("w")).toMatchObject({ hashed: 0, modified: 0 });
  });

  it("reads a file written around the last commit even when its stat matches (racily clean)", async () => {
    await put("a.txt", "one", new Date());
    await afs.attachments.attach(dir, { workspace: "w" });
    const { mtimeMs } = await import("node:fs").then((fs) => fs.statSync(join(dir, "a.txt")));
    // Same size, same mtime, new bytes: only the racy guard can see it.
    await writeFile(join(dir, "a.txt"), "two");
    await utimes(join(dir, "a.txt"), new Date(), new Date(mtimeMs));
    expect(await afs.attachments.record("w")).toMatchObject({ modified: 1 });
  });

  it("records only the given paths; a directory path stands for its subtree", async () => {
    await put("a/1.txt", "1");
    await put("b/2.txt", "2");
    await afs.attachments.attach(dir, { workspace: "w" });
    await put("a/1.txt", "1!");
    await put("b/2.txt", "2!");
    await put("c/new/3.txt", "3");
    expect(await afs.attachments.record("w", { paths: ["/a/1.txt", "/c/new/3.txt"] })).toMatchObject({
      added: 1,
      modified: 1,
    });
    const state = await live("w");
    expect(state["/b/2.txt"]).toBe("2");
    expect(state["/c/new/3.txt"]).toBe("3");
    expect(await afs.attachments.record("w", { paths: ["/b"] })).toMatchObject({ modified: 1, examined: 1 });
    // A path under something that is no longer a directory is examined from there.
    await rm(join(dir, "a"), { recursive: true });
    await put("a", "now a file");
    expect(await afs.attachments.record("w", { paths: ["/a/1.txt"] })).toMatchObject({ modified: 1, added: 0 });
    expect((await live("w"))["/a"]).toBe("now a file");
  });
});
