// `afs fs ls` pages a directory with --limit and --cursor (file_list's pages: one op); the note
// about more entries goes to stderr, so stdout stays the listing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt } from "./run.js";

describe("afs fs ls pages", () => {
  let afs: Cli;
  beforeAll(async () => {
    ensureBuilt();
    afs = await cli();
    afs.ok(["ws", "create", "demo"]);
    afs.ok(["ws", "use", "demo"]);
    for (const name of ["a", "b", "c", "d", "e"]) afs.ok(["fs", "write", `/${name}.txt`, "--content", name]);
    afs.ok(["fs", "mkdir", "/z"]);
  });
  afterAll(() => afs?.cleanup());

  it("lists a page, says how to go on, and goes on from the cursor", () => {
    const first = afs.run(["fs", "ls", "--limit", "3"]);
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/\/z\/\n.*\/a\.txt\n.*\/b\.txt\n$/);
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1] as string;
    expect(cursor).toBeDefined();
    const rest = afs.run(["fs", "ls", "--limit", "3", "--cursor", cursor]);
    expect(rest.stdout).toMatch(/\/c\.txt\n.*\/d\.txt\n.*\/e\.txt\n$/);
    expect(rest.stderr).toBe("");
    const page = afs.json<{ items: { path: string }[]; cursor?: string }>(["fs", "ls", "--limit", "5"]);
    expect(page.items.map((i) => i.path)).toEqual(["/z", "/a.txt", "/b.txt", "/c.txt", "/d.txt"]);
    expect(page.cursor).toEqual(expect.any(String));
    const wrong = afs.run(["fs", "ls", "/z", "--cursor", cursor]);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toContain("INVALID_ARGUMENT");
  });
});
