// The workspace engine end to end on a real SQLite file: checkpoints, restore, fork, diff,
// dedup, gc, import/export, and live-state edge cases (directory renames, delete + recreate).
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Volume } from "../../src/volume/volume.js";
import type { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

const text = (s: string) => Buffer.from(s);
const put = (v: Volume, path: string, s: string) => v.writeFile(path, text(s), { op: "write" });
const cat = async (v: Volume, path: string) => (await v.readFile(path)).toString();

async function tree(v: Volume): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const s of v.walk("/")) out[s.path] = s.kind === "dir" ? "<dir>" : await cat(v, s.path);
  return out;
}

let afs: Afs;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ afs, cleanup } = await tempAfs()));
afterEach(() => cleanup());

describe("workspaces", () => {
  it("creates, lists, shows and deletes", async () => {
    const info = await afs.workspaces.create("demo", { description: "a demo" });
    expect(info).toMatchObject({ name: "demo", description: "a demo", head: "initial", dirty: false });
    await expect(afs.workspaces.create("demo")).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
    await expect(afs.workspaces.create("bad name")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect((await afs.workspaces.list()).map((w) => w.name)).toEqual(["demo"]);
    await afs.workspaces.delete("demo");
    await expect(afs.workspaces.get("demo")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("fork includes live changes and then diverges", async () => {
    await afs.workspaces.create("src");
    const v = await afs.workspaces.volume("src");
    await put(v, "/a.txt", "one");
    await afs.checkpoints.create("src");
    await put(v, "/b/c.txt", "live");
    await afs.workspaces.fork("src", "copy");
    const f = await afs.workspaces.volume("copy");
    expect(await tree(f)).toEqual({ "/a.txt": "one", "/b": "<dir>", "/b/c.txt": "live" });
    await put(f, "/a.txt", "changed in fork");
    expect(await cat(v, "/a.txt")).toBe("one");
    expect((await afs.workspaces.get("src")).dirty).toBe(true);
  });
});

describe("checkpoints", () => {
  it("creates, lists newest first, and returns head when clean", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    const clean = await afs.checkpoints.create("w");
    expect(clean).toMatchObject({ created: false, checkpoint: { name: "initial" } });
    await put(v, "/x", "1");
    const first = await afs.checkpoints.create("w", { name: "first" });
    expect(first).toMatchObject({ created: true, checkpoint: { name: "first", kind: "manual" } });
    await put(v, "/x", "2");
    const second = await afs.checkpoints.create("w");
    expect(second.created).toBe(true);
    expect((await afs.checkpoints.list("w")).map((c) => c.name)).toEqual([second.checkpoint.name, "first", "initial"]);
    await expect(afs.checkpoints.create("w", { name: "first" })).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
    // Writing back the same content is no change at all.
    await put(v, "/x", "2");
    expect((await afs.checkpoints.create("w")).created).toBe(false);
    expect((await afs.workspaces.get("w")).dirty).toBe(false);
  });

  it("restore brings back the old state and saves a dirty live state as a safety checkpoint", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await put(v, "/keep.txt", "v1");
    await afs.checkpoints.create("w", { name: "v1" });
    await put(v, "/keep.txt", "v2");
    await put(v, "/new/deep/file.txt", "new");
    const restored = await afs.checkpoints.restore("w", "v1");
    expect(restored.safety?.kind).toBe("safety");
    expect(await tree(v)).toEqual({ "/keep.txt": "v1" });
    // The safety checkpoint holds what was live.
    await afs.checkpoints.restore("w", restored.safety?.name as string);
    expect(await cat(v, "/new/deep/file.txt")).toBe("new");
    // A clean restore makes no safety checkpoint.
    expect((await afs.checkpoints.restore("w", "v1")).safety).toBeNull();
    await expect(afs.checkpoints.restore("w", "nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("deletes a checkpoint but never the head", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await put(v, "/f", "1");
    await afs.checkpoints.create("w", { name: "one" });
    await expect(afs.checkpoints.delete("w", "one")).rejects.toMatchObject({ code: "CONFLICT" });
    await afs.checkpoints.delete("w", "initial");
    expect((await afs.checkpoints.list("w")).map((c) => c.name)).toEqual(["one"]);
  });

  it("diffs checkpoints and the live state with renames and hunks", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await put(v, "/src/a.ts", "line1\nline2\nline3\n");
    await put(v, "/src/old-name.ts", "moved content\n");
    await put(v, "/gone.txt", "bye\n");
    await afs.checkpoints.create("w", { name: "base" });
    await put(v, "/src/a.ts", "line1\nLINE2\nline3\n");
    await v.rename("/src/old-name.ts", "/lib/new-name.ts", {});
    await v.remove("/gone.txt", {});
    await put(v, "/added.md", "# hi\n");
    const d = await afs.checkpoints.diff("w", "base");
    expect(d.summary).toEqual({ added: 1, modified: 1, deleted: 1, renamed: 1 });
    const byPath = Object.fromEntries(d.changes.map((c) => [c.path, c]));
    expect(byPath["/lib/new-name.ts"]).toMatchObject({ status: "renamed", old_path: "/src/old-name.ts" });
    expect(byPath["/src/a.ts"]?.patch).toContain("-line2\n+LINE2");
    await afs.checkpoints.create("w", { name: "next" });
    expect((await afs.checkpoints.diff("w", "base", "next")).summary).toEqual(d.summary);
    expect((await afs.checkpoints.diff("w", "next")).changes).toEqual([]);
  });
});

describe("live state", () => {
  it("renames a directory with live changes below it, and deletes and recreates", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await put(v, "/d/a.txt", "a");
    await put(v, "/d/sub/b.txt", "b");
    await afs.checkpoints.create("w");
    await put(v, "/d/sub/c.txt", "c");
    await v.remove("/d/a.txt", {});
    await v.rename("/d", "/e", {});
    expect(await tree(v)).toEqual({ "/e": "<dir>", "/e/sub": "<dir>", "/e/sub/b.txt": "b", "/e/sub/c.txt": "c" });
    await afs.checkpoints.create("w");
    expect(await tree(v)).toEqual({ "/e": "<dir>", "/e/sub": "<dir>", "/e/sub/b.txt": "b", "/e/sub/c.txt": "c" });
    await v.remove("/e", { recursive: true });
    await put(v, "/e/fresh.txt", "fresh");
    expect(await tree(v)).toEqual({ "/e": "<dir>", "/e/fresh.txt": "fresh" });
    await afs.checkpoints.create("w");
    expect(await tree(v)).toEqual({ "/e": "<dir>", "/e/fresh.txt": "fresh" });
  });

  it("walks reuse unchanged subtrees and still see every change, from this and another handle", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    for (const p of ["/a/b/c/one.txt", "/a/b/two.txt", "/a/x/three.txt", "/top.txt"]) await put(v, p, p);
    await afs.checkpoints.create("w", { name: "base" });
    const paths = async () => {
      const out: string[] = [];
      for await (const s of (await afs.workspaces.volume("w")).walk("/"))
        out.push(`${s.path}:${s.sha256?.slice(0, 6) ?? "dir"}`);
      return out;
    };
    const before = await paths();
    expect(await paths()).toEqual(before);
    await put(v, "/a/b/c/one.txt", "changed");
    await v.remove("/a/x", { recursive: true });
    await put(v, "/a/b/c/new.txt", "new");
    const after = await paths();
    expect(after.filter((p) => p.startsWith("/a/x"))).toEqual([]);
    expect(after.some((p) => p.startsWith("/a/b/c/new.txt:"))).toBe(true);
    expect(after.find((p) => p.startsWith("/a/b/c/one.txt"))).not.toEqual(
      before.find((p) => p.startsWith("/a/b/c/one.txt")),
    );
    // A second engine on the same store (another process, in effect) changes the live state.
    const { Afs } = await import("../../src/workspace/afs.js");
    const other = await Afs.open({ home: afs.home, store: afs.storeUrl });
    await (await other.workspaces.volume("w")).rename("/a/b", "/a/moved", {});
    await other.close();
    expect((await paths()).filter((p) => p.startsWith("/a/b"))).toEqual([]);
    await afs.checkpoints.restore("w", "base");
    expect(await paths()).toEqual(before);
  });

  it("refuses to write under a file and over a directory", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await put(v, "/f", "x");
    await expect(put(v, "/f/g", "y")).rejects.toMatchObject({ code: "INVALID_PATH" });
    await put(v, "/d/x", "x");
    await expect(put(v, "/d", "y")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(v.remove("/d", {})).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(v.rename("/d", "/d/inner", {})).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("records an event for every mutation", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    const r1 = await put(v, "/a", "1");
    const r2 = await put(v, "/a", "2");
    expect(r2.revision).toBe(r1.revision + 1);
    const { events } = await afs.events.list("w", { limit: 100 });
    expect(events.map((e) => [e.seq, e.op, e.path])).toEqual([
      [1, "write", "/a"],
      [2, "write", "/a"],
    ]);
    expect(events[1]?.oldHash).toBe(r1.sha256);
    expect(events[1]?.newHash).toBe(r2.sha256);
  });
});

describe("content addressing", () => {
  it("stores identical content once across workspaces and checkpoints, and gc frees the rest", async () => {
    const countBlobs = async () => {
      let n = 0;
      for await (const _ of internalsOf(afs).store.listObjects("blob")) n++;
      return n;
    };
    await afs.workspaces.create("a");
    await afs.workspaces.create("b");
    const va = await afs.workspaces.volume("a");
    const vb = await afs.workspaces.volume("b");
    const before = await countBlobs();
    await put(va, "/one.txt", "same bytes");
    await put(va, "/two.txt", "same bytes");
    await afs.checkpoints.create("a");
    await put(vb, "/elsewhere/three.txt", "same bytes");
    await afs.workspaces.fork("a", "c");
    expect((await countBlobs()) - before).toBe(1);
    await put(vb, "/unique.txt", "only in b");
    expect((await countBlobs()) - before).toBe(2);
    await afs.workspaces.delete("b");
    const gc = await afs.maintenance.gc({ graceMs: 0 });
    expect(gc.blobs_deleted).toBe(1);
    expect(await cat(va, "/one.txt")).toBe("same bytes");
    expect((await afs.maintenance.fsck()).ok).toBe(true);
  });
});

describe("import and export", () => {
  it("imports honouring .gitignore and .afsignore, and exports the same bytes", async () => {
    const src = await tempDir();
    const out = await tempDir();
    try {
      await mkdir(join(src.dir, "src/nested"), { recursive: true });
      await mkdir(join(src.dir, "node_modules/x"), { recursive: true });
      await writeFile(join(src.dir, ".gitignore"), "node_modules/\n*.log\n");
      await writeFile(join(src.dir, "src/.afsignore"), "secret.txt\n");
      await writeFile(join(src.dir, "src/main.ts"), "export {};\n");
      await writeFile(join(src.dir, "src/secret.txt"), "no");
      await writeFile(join(src.dir, "src/nested/deep.bin"), Buffer.from([0, 1, 2, 255]));
      await writeFile(join(src.dir, "debug.log"), "no");
      await writeFile(join(src.dir, "node_modules/x/index.js"), "no");
      await writeFile(join(src.dir, "run.sh"), "#!/bin/sh\n", { mode: 0o755 });
      await symlink("src/main.ts", join(src.dir, "link"));
      const result = await afs.workspaces.import("imp", src.dir);
      expect(result.files).toBe(5); // .gitignore, .afsignore, main.ts, deep.bin, run.sh
      const v = await afs.workspaces.volume("imp");
      const paths = Object.keys(await tree(v)).sort();
      expect(paths).toEqual([
        "/.gitignore",
        "/link",
        "/run.sh",
        "/src",
        "/src/.afsignore",
        "/src/main.ts",
        "/src/nested",
        "/src/nested/deep.bin",
      ]);
      expect((await v.stat("/link"))?.target).toBe("src/main.ts");
      expect((await afs.checkpoints.list("imp"))[0]?.kind).toBe("import");
      await put(v, "/live.txt", "live");
      const exported = join(out.dir, "x");
      await afs.workspaces.export("imp", exported);
      expect(await readFile(join(exported, "src/nested/deep.bin"))).toEqual(Buffer.from([0, 1, 2, 255]));
      expect(await readFile(join(exported, "live.txt"), "utf8")).toBe("live");
      await expect(afs.workspaces.export("imp", exported)).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
      await afs.workspaces.export("imp", join(out.dir, "y"), { checkpoint: "import" });
      await expect(readFile(join(out.dir, "y/live.txt"))).rejects.toThrow();
    } finally {
      await src.cleanup();
      await out.cleanup();
    }
  });
});

describe("integrity", () => {
  it("stays consistent when new directories point at the empty tree, before and after gc", async () => {
    const src = await tempDir();
    try {
      await writeFile(join(src.dir, "a.txt"), "a");
      await afs.workspaces.import("imp", src.dir);
      const v = await afs.workspaces.volume("imp");
      await v.mkdir("/empty");
      expect(await afs.maintenance.fsck()).toMatchObject({ ok: true, problems: [] });
      await afs.maintenance.gc({ graceMs: 0 });
      expect(await afs.maintenance.fsck()).toMatchObject({ ok: true, problems: [] });
    } finally {
      await src.cleanup();
    }
  });
});
