// An `afs acp` session's directory as a mount (SessionMount, in this process on real SQLite): a turn
// that changed files ends in a checkpoint and one that did not adds none, the agent's writes are in
// the workspace when they return, the workspace's changes come down into the directory, and an
// export --force onto the mounted directory undoes a turn (and the undo).
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionMount } from "../../src/cli/acp-mount.js";
import { TEMP_NAME } from "../../src/volume/dir-scan.js";
import type { Afs } from "../../src/workspace/afs.js";
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

/** Every file under a directory on disk: relative path → content (the running sync's temporary files left out). */
async function disk(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || TEMP_NAME.test(e.name)) continue;
    const rel = join(e.parentPath, e.name).slice(root.length + 1);
    out[rel] = await readFile(join(root, rel), "utf8");
  }
  return out;
}

/** The workspace's live state as the store holds it: path → content. */
async function live(name: string): Promise<Record<string, string>> {
  const v = await afs.workspaces.volume(name);
  const out: Record<string, string> = {};
  for await (const s of v.walk("/"))
    if (s.kind === "file") out[s.path.slice(1)] = (await v.readFile(s.path)).toString();
  return out;
}

describe("SessionMount", () => {
  it("checkpoints a turn that changed files and adds nothing for a turn that did not", async () => {
    await put("a.txt", "a");
    const session = await SessionMount.open(afs, dir);
    try {
      expect(session.workspace).toBe("proj");
      // Created from the directory: its first turn boundary keeps what it held.
      expect(await session.checkpointTurn({ name: "edits-1" })).toMatchObject({ kind: "auto" });
      expect(await session.checkpointTurn()).toBeNull();
      await put("a.txt", "a2");
      await put("sub/b.txt", "b");
      const cp = await session.checkpointTurn({ description: "turn 1" });
      expect(cp).toMatchObject({ kind: "auto", description: "turn 1" });
      expect(await live("proj")).toEqual({ "a.txt": "a2", "sub/b.txt": "b" });
      expect(await session.checkpointTurn()).toBeNull();
      expect((await afs.mounts.list()).map((m) => [m.workspace, m.report?.state])).toEqual([["proj", "running"]]);
    } finally {
      await session.close();
    }
    expect((await afs.mounts.list()).map((m) => m.report?.state)).toEqual(["stopped"]);
  });

  it("has the agent's writes in the workspace when they return, and brings the workspace's changes down", async () => {
    const session = await SessionMount.open(afs, dir, { workspace: "w" });
    try {
      const v = await session.volume();
      await v.writeFile("/src/new.ts", Buffer.from("export const x = 1;\n"), { op: "write" });
      // No flush in between: another reader of the workspace (the agent's MCP server) sees it at once.
      expect((await afs.workspaces.volume("w").then((w) => w.readFile("/src/new.ts"))).toString()).toBe(
        "export const x = 1;\n",
      );
      await v.rename("/src/new.ts", "/src/moved.ts", {});
      expect(await live("w")).toEqual({ "src/moved.ts": "export const x = 1;\n" });
      // Outside the directory: refused, as on any directory.
      await expect(v.writeFile("/../escape.txt", Buffer.from("x"), { op: "write" })).rejects.toMatchObject({
        code: expect.stringMatching(/INVALID_PATH|PERMISSION_DENIED/),
      });
      const ws = await afs.workspaces.volume("w");
      await ws.writeFile("/from-mcp.txt", Buffer.from("from mcp\n"), { op: "write" });
      await session.flush();
      expect(await readFile(join(dir, "from-mcp.txt"), "utf8")).toBe("from mcp\n");
    } finally {
      await session.close();
    }
  });

  it("undoes a turn with export --force onto the mounted directory, and undoes the undo", async () => {
    await put("keep.txt", "v1");
    await put("old.txt", "old");
    await put(".gitignore", "*.log\n");
    const session = await SessionMount.open(afs, dir);
    try {
      const start = (await session.checkpointTurn({ name: "edits-1" }))?.name as string;
      await put("keep.txt", "v2");
      await rm(join(dir, "old.txt"));
      await put("added/new.txt", "new");
      await put("debug.log", "ignored, survives");
      const turn = await session.checkpointTurn({ name: "turn-1" });
      expect(turn).not.toBeNull();

      const undo = await afs.workspaces.export("proj", dir, { checkpoint: start, force: true });
      // What the directory held is kept (the same files as the turn's checkpoint).
      if (undo.safety) expect((await afs.checkpoints.diff("proj", "turn-1", undo.safety.name)).changes).toEqual([]);
      expect(await disk(dir)).toEqual({
        ".gitignore": "*.log\n",
        "keep.txt": "v1",
        "old.txt": "old",
        "debug.log": "ignored, survives",
      });
      expect((await readdir(dir)).includes("added")).toBe(false);
      // The mount uploads what the export changed: the live state is the checkpoint again.
      await session.flush();
      expect(await live("proj")).toEqual({ ".gitignore": "*.log\n", "keep.txt": "v1", "old.txt": "old" });

      // A change made after the undo is kept as a safety checkpoint by the redo.
      await put("keep.txt", "v3");
      const redo = await afs.workspaces.export("proj", dir, { checkpoint: "turn-1", force: true });
      expect(redo.safety?.kind).toBe("safety");
      expect(await disk(dir)).toMatchObject({
        "keep.txt": "v2",
        "added/new.txt": "new",
        "debug.log": "ignored, survives",
      });
      await session.flush();
      expect(await live("proj")).toMatchObject({ "keep.txt": "v2", "added/new.txt": "new" });
      await afs.workspaces.export("proj", dir, { checkpoint: redo.safety?.name as string, force: true });
      expect((await disk(dir))["keep.txt"]).toBe("v3");
    } finally {
      await session.close();
    }
  });

  it("refuses a second workspace for a mounted directory, naming the one it is mounted on", async () => {
    await put("a.txt", "a");
    const session = await SessionMount.open(afs, dir);
    await session.close();
    await expect(SessionMount.open(afs, dir, { workspace: "other" })).rejects.toMatchObject({
      code: "ALREADY_EXISTS",
      message: expect.stringContaining("proj"),
    });
    // Without -w, the directory's own workspace again.
    const again = await SessionMount.open(afs, dir);
    expect(again.workspace).toBe("proj");
    await again.close();
  });
});
