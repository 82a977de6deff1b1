import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { Afs } from "../workspace/afs.js";
import { read } from "./read.js";

describe("read on a workspace", () => {
  const opened: Afs[] = [];
  let cleanup: () => Promise<void> = async () => {};
  afterEach(async () => {
    for (const a of opened.splice(0)) await a.close();
    await cleanup();
  });

  it("sees the latest write from another process on the same store, whatever it read before", async () => {
    const t = await tempDir("afs-home-");
    cleanup = t.cleanup;
    const reader = await Afs.open({ home: t.dir, actor: "reader" });
    const writer = await Afs.open({ home: t.dir, actor: "writer" });
    opened.push(reader, writer);
    await reader.workspaces.create("w");
    const text = (i: number) => `${"line of text that deflates well\n".repeat(40)}${i}\n`;
    await (await writer.workspaces.volume("w")).writeFile("/f.txt", Buffer.from(text(0)), { op: "write" });
    for (let i = 1; i <= 3; i++) {
      const before = await read(await reader.workspaces.volume("w"), { path: "/f.txt" });
      expect(before.content).toBe(text(i - 1));
      await (await writer.workspaces.volume("w")).writeFile("/f.txt", Buffer.from(text(i)), { op: "write" });
      expect(await read(await reader.workspaces.volume("w"), { path: "/f.txt" })).toMatchObject({
        content: text(i),
        size: Buffer.byteLength(text(i)),
      });
    }
    // Back to content read before: the same bytes, and its hash is the one the write reported.
    const w = await (await writer.workspaces.volume("w")).writeFile("/f.txt", Buffer.from(text(1)), { op: "write" });
    expect(await read(await reader.workspaces.volume("w"), { path: "/f.txt" })).toMatchObject({
      content: text(1),
      sha256: w.sha256,
    });
  });

  it("hands each caller its own bytes, and checks the stat before reading", async () => {
    const t = await tempDir("afs-home-");
    cleanup = t.cleanup;
    const afs = await Afs.open({ home: t.dir, actor: "test" });
    opened.push(afs);
    await afs.workspaces.create("w");
    const v = await afs.workspaces.volume("w");
    await v.writeFile("/a.txt", Buffer.from("abc\n"), { op: "write" });
    const bytes = await v.readFile("/a.txt");
    bytes.fill(0x78);
    expect((await read(v, { path: "/a.txt" })).content).toBe("abc\n");
    expect((await v.readFile("/a.txt")).toString()).toBe("abc\n");
    const seen: number[] = [];
    await read(v, { path: "/a.txt" }, { check: (s) => seen.push(s.size) });
    await expect(
      read(
        v,
        { path: "/a.txt" },
        {
          check: () => {
            throw new Error("too big");
          },
        },
      ),
    ).rejects.toThrow("too big");
    expect(seen).toEqual([4]);
  });
});
