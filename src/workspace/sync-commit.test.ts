import { afterEach, describe, expect, it } from "vitest";
import { tempAfs } from "../../test/helpers/tmp.js";
import { type Entry, FILE_MODE, SYMLINK_MODE } from "../core/entry.js";
import { sha256 } from "../core/hash.js";
import type { SyncedVersion } from "../core/mount-state.js";
import type { Afs } from "./afs.js";

const v = (text: string): SyncedVersion => ({ kind: "file", sha256: sha256(text), size: text.length, mode: FILE_MODE });

describe("a mount's uploads (afs.mounts.commit)", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  const setup = async (): Promise<Afs> => {
    const t = await tempAfs();
    cleanups.push(t.cleanup);
    await t.afs.workspaces.create("ws");
    return t.afs;
  };
  const fileEntry = async (afs: Afs, text: string, mode = FILE_MODE): Promise<Entry> => ({
    kind: "file",
    hash: await afs.mounts.storeBytes(Buffer.from(text)),
    size: text.length,
    mode,
    mtime: Date.now(),
  });

  it("applies each change only where the workspace holds the version it names", async () => {
    const afs = await setup();
    const vol = await afs.workspaces.volume("ws");
    await vol.writeFile("/f", Buffer.from("one"), { op: "write" });
    const { outcomes } = await afs.mounts.commit("ws", [
      { path: "/f", entry: await fileEntry(afs, "stale"), expect: v("zero") }, // a newer version is there
      { path: "/g/h", entry: await fileEntry(afs, "new"), expect: null }, // parents made
      { path: "/x", entry: await fileEntry(afs, "no"), expect: v("something") }, // nothing there
    ]);
    expect(outcomes.map((o) => o.applied)).toEqual([false, true, false]);
    expect((await vol.readFile("/f")).toString()).toBe("one");
    expect((await vol.readFile("/g/h")).toString()).toBe("new");
    expect(await vol.stat("/x")).toBeNull();
    const events = (await afs.events.list("ws")).events.filter((e) => e.op === "sync");
    expect(events.map((e) => e.path)).toEqual(["/g/h"]);
  });

  it("sets modes and symlinks, and removes a directory only once nothing is left below it", async () => {
    const afs = await setup();
    const vol = await afs.workspaces.volume("ws");
    await vol.writeFile("/d/a", Buffer.from("a"), { op: "write" });
    await vol.writeFile("/d/b", Buffer.from("b"), { op: "write" });
    const target = Buffer.from("d/a");
    const link: Entry = {
      kind: "symlink",
      hash: await afs.mounts.storeBytes(target),
      size: 3,
      mode: SYMLINK_MODE,
      mtime: 0,
    };
    const dir: SyncedVersion = { kind: "dir", sha256: null, size: 0, mode: 0o755 };
    const first = await afs.mounts.commit("ws", [
      { path: "/d/a", entry: await fileEntry(afs, "a", 0o755), expect: v("a") },
      { path: "/l", entry: link, expect: null },
      { path: "/d/b", entry: null, expect: v("b") },
      { path: "/d", entry: null, expect: dir }, // /d/a is still there
    ]);
    expect(first.outcomes.map((o) => o.applied)).toEqual([true, true, true, false]);
    expect((await vol.stat("/d/a"))?.mode).toBe(0o755);
    expect((await vol.stat("/l"))?.target).toBe("d/a");
    const second = await afs.mounts.commit("ws", [
      { path: "/d/a", entry: null, expect: { ...v("a"), mode: 0o755 } },
      { path: "/d", entry: null, expect: dir },
    ]);
    expect(second.outcomes.map((o) => o.applied)).toEqual([true, true]);
    expect(await vol.stat("/d")).toBeNull();
  });
});
