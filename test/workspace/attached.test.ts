// An attached directory across turns: the watcher's paths record what a full record would, a turn
// without changes adds no checkpoint, export --force undoes a turn (and the undo), and the attached
// volume serves the directory while grep keeps using the content index for recorded files.
import { mkdir, readdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Hash, sha256 } from "../../src/core/hash.js";
import { grep } from "../../src/ops/grep.js";
import { lines } from "../../src/ops/lines.js";
import type { LiteralQuery, TextIndex } from "../../src/search/text-index.js";
import type { Afs } from "../../src/workspace/afs.js";
import { AttachedSession } from "../../src/workspace/attached-session.js";
import { tempProject } from "../helpers/tmp.js";

let afs: Afs;
let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ afs, dir, cleanup } = await tempProject("proj"));
});
afterEach(() => cleanup());

async function put(rel: string, content: string): Promise<void> {
  await mkdir(join(dir, rel, ".."), { recursive: true });
  await writeFile(join(dir, rel), content);
}

/** Every file under a directory on disk: relative path → content. */
async function disk(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const rel = join(e.parentPath, e.name).slice(root.length + 1);
    out[rel] = await readFile(join(root, rel), "utf8");
  }
  return out;
}

let forks = 0;
/** The workspace's recorded live state (through a fork, which reads the store, not the directory). */
async function live(name: string): Promise<Record<string, string>> {
  const copy = `copy-${forks++}`;
  await afs.workspaces.fork(name, copy);
  const v = await afs.workspaces.volume(copy);
  const out: Record<string, string> = {};
  for await (const s of v.walk("/"))
    if (s.kind === "file") out[s.path.slice(1)] = (await v.readFile(s.path)).toString();
  await afs.workspaces.delete(copy);
  return out;
}

describe("AttachedSession", () => {
  it("checkpoints a turn that changed files and adds nothing for a turn that did not", async () => {
    await put("a.txt", "a");
    const session = await AttachedSession.open(afs, dir);
    try {
      expect(session.workspace).toBe("proj");
      expect(await session.checkpointTurn()).toBeNull();
      await put("a.txt", "a2");
      await put("sub/b.txt", "b");
      const cp = await session.checkpointTurn({ description: "turn 1" });
      expect(cp).toMatchObject({ kind: "auto", description: "turn 1" });
      expect(await live("proj")).toEqual({ "a.txt": "a2", "sub/b.txt": "b" });
      expect(await session.checkpointTurn()).toBeNull();
      expect((await afs.checkpoints.list("proj")).length).toBe(2);
      const r = await session.record();
      expect(r).toMatchObject({ full: false, examined: 0 });
    } finally {
      session.close();
    }
  });

  it("records from the watcher's paths exactly what a full record finds", async () => {
    const names = ["a", "b", "c"];
    const rel = fc.tuple(fc.constantFrom(...names), fc.constantFrom("", ...names), fc.constantFrom(...names));
    const op = fc.oneof(
      fc.record({ kind: fc.constant("write" as const), path: rel, text: fc.string({ maxLength: 8 }) }),
      fc.record({ kind: fc.constant("rm" as const), path: rel }),
      fc.record({ kind: fc.constant("mv" as const), path: rel, to: rel }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const root = join(dir, `run-${run++}`);
        await mkdir(root);
        const session = await AttachedSession.open(afs, root, { workspace: `w${run}` });
        const twin = `t${run}`;
        try {
          for (const o of ops) {
            const p = join(root, ...o.path.filter(Boolean));
            if (o.kind === "write") {
              await mkdir(join(p, ".."), { recursive: true }).catch(() => {});
              await writeFile(p, o.text).catch(() => {});
            } else if (o.kind === "rm") await rm(p, { recursive: true, force: true }).catch(() => {});
            else {
              const to = join(root, ...o.to.filter(Boolean));
              await mkdir(join(to, ".."), { recursive: true }).catch(() => {});
              await rename(p, to).catch(() => {});
            }
          }
          const watched = await session.record();
          expect(watched.full).toBe(false);
          // A second workspace attached to a copy-free full record of the same directory.
          await afs.attachments.detach(session.workspace);
          await afs.workspaces.fork(session.workspace, twin);
          await afs.attachments.attach(root, { workspace: twin, adopt: true });
          const full = await afs.attachments.record(twin);
          expect({ added: full.added, modified: full.modified, deleted: full.deleted }).toEqual({
            added: 0,
            modified: 0,
            deleted: 0,
          });
        } finally {
          session.close();
          await afs.attachments.detach(twin);
        }
      }),
      { numRuns: 25 },
    );
  });
});

describe("exportWorkspace with force", () => {
  it("undoes a turn on the attached directory, and undoes the undo", async () => {
    await put("keep.txt", "v1");
    await put("old.txt", "old");
    await put(".gitignore", "*.log\n");
    const session = await AttachedSession.open(afs, dir);
    try {
      const before = await afs.checkpoints.create("proj", { name: "before" });
      expect(before.created).toBe(false); // the import is already a checkpoint
      const start = (await afs.workspaces.get("proj")).head;
      await put("keep.txt", "v2");
      await rm(join(dir, "old.txt"));
      await put("added/new.txt", "new");
      await put("debug.log", "ignored, survives");
      const turn = await session.checkpointTurn();
      expect(turn).not.toBeNull();

      const undo = await afs.workspaces.export("proj", dir, { checkpoint: start, force: true });
      expect(undo.safety).toBeNull(); // the turn's checkpoint already holds what the directory held
      expect(await disk(dir)).toEqual({
        ".gitignore": "*.log\n",
        "keep.txt": "v1",
        "old.txt": "old",
        "debug.log": "ignored, survives",
      });
      expect((await readdir(dir)).includes("added")).toBe(false);
      expect(await session.record()).toMatchObject({ added: 0, modified: 0, deleted: 0 });
      expect((await afs.workspaces.get("proj")).dirty).toBe(false);

      // A change made after the undo is kept as a safety checkpoint by the redo.
      await put("keep.txt", "v3");
      const redo = await afs.workspaces.export("proj", dir, { checkpoint: turn?.name as string, force: true });
      expect(redo.safety?.kind).toBe("safety");
      expect(await disk(dir)).toMatchObject({
        "keep.txt": "v2",
        "added/new.txt": "new",
        "debug.log": "ignored, survives",
      });
      expect(await session.checkpointTurn()).toBeNull();
      await afs.workspaces.export("proj", dir, { checkpoint: redo.safety?.name as string, force: true });
      expect((await disk(dir))["keep.txt"]).toBe("v3");
    } finally {
      session.close();
    }
  });

  it("keeps a foreign directory's content as a safety checkpoint and still refuses it without force", async () => {
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await v.writeFile("/a.txt", Buffer.from("from workspace"), { op: "write" });
    await afs.checkpoints.create("w", { name: "one" });
    await put("mine.txt", "mine");
    await expect(afs.workspaces.export("w", dir, { checkpoint: "one" })).rejects.toMatchObject({
      code: "ALREADY_EXISTS",
    });
    const result = await afs.workspaces.export("w", dir, { checkpoint: "one", force: true });
    expect(await disk(dir)).toEqual({ "a.txt": "from workspace" });
    expect((await afs.workspaces.get("w")).head).toBe("one");
    await afs.workspaces.export("w", dir, { checkpoint: result.safety?.name as string, force: true });
    expect(await disk(dir)).toEqual({ "mine.txt": "mine" });
  });
});

describe("the attached volume", () => {
  it("opens a recorded file with its recorded hash, and a file changed since without one", async () => {
    const old = new Date("2020-01-01T00:00:00Z");
    for (const [name, text] of [
      ["a.txt", "one\n"],
      ["b.txt", "two\n"],
    ] as const) {
      await put(name, text);
      await utimes(join(dir, name), old, old);
    }
    await afs.attachments.attach(dir);
    const v = await afs.workspaces.volume("proj");
    const hashOf = async (path: string): Promise<Hash | undefined> => {
      const file = await v.openFile(path);
      try {
        return file.sha256;
      } finally {
        await file.close();
      }
    };
    expect(await hashOf("/a.txt")).toBe(sha256(Buffer.from("one\n")));
    // Same size, other bytes, behind the workspace's back: a new mtime, so no recorded hash is trusted,
    // and file_lines hashes what is there.
    await put("b.txt", "TWO\n");
    expect(await hashOf("/b.txt")).toBeUndefined();
    expect((await lines(v, { path: "/b.txt", start: 1 })).sha256).toBe(sha256(Buffer.from("TWO\n")));
  });

  it("reads and writes the directory, records each write, and lets grep use the index for recorded files", async () => {
    const old = new Date("2020-01-01T00:00:00Z");
    for (let i = 0; i < 10; i++) {
      await put(`src/f${i}.ts`, `export const v${i} = ${i};\n`);
      await utimes(join(dir, `src/f${i}.ts`), old, old);
    }
    await afs.attachments.attach(dir);
    const v = await afs.workspaces.volume("proj");
    expect(v.label).toMatch(/proj/);
    const w = await v.writeFile("/src/new.ts", Buffer.from("export const needle = 1;\n"), { op: "write" });
    expect(w.revision).toBe((await afs.workspaces.get("proj")).revision);
    expect(await readFile(join(dir, "src/new.ts"), "utf8")).toBe("export const needle = 1;\n");
    expect((await live("proj"))["src/new.ts"]).toBe("export const needle = 1;\n");
    // Changed on disk behind the workspace's back: not hashed, so read by grep.
    await put("src/f3.ts", "export const needle3 = 3;\n");

    const asked: Hash[][] = [];
    const index = afs.indexes.text;
    const spy: TextIndex = Object.assign(Object.create(index) as TextIndex, {
      candidates: (hashes: readonly Hash[], q: LiteralQuery) => {
        asked.push([...hashes]);
        return index.candidates(hashes, q);
      },
    });
    const found = await grep(v, { pattern: "needle", files_with_matches: true }, { indexes: { text: spy } });
    expect(found).toMatchObject({ files: ["/src/f3.ts", "/src/new.ts"] });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.length).toBe(9); // the ten recorded files but f3 (new.ts was written just now: racy)
  });
});
