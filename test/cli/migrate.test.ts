// `afs migrate` through the built CLI: a store with history (checkpoints, a fork, live changes, a
// large chunked file, tokens) makes a round trip through a second store and comes back identical.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open.js";
import type { Store, WorkspaceDump } from "../../src/store/store.js";
import { storeEnabled } from "../contract/stores.js";
import { startRedis } from "../helpers/redis-server.js";
import { type Cli, cli, ensureBuilt } from "./run.js";

/** Everything a store holds of its workspaces and tokens, in a comparable form. */
async function contents(url: string): Promise<{ dumps: WorkspaceDump[]; tokens: unknown[]; templates: unknown[] }> {
  const store: Store = await openStore(url);
  try {
    const dumps: WorkspaceDump[] = [];
    for (const ws of await store.listWorkspaces()) {
      dumps.push({
        workspace: ws,
        checkpoints: await store.listCheckpoints(ws.name),
        overlay: await store.overlayUnder(ws.name, "/"),
        events: await store.listEvents(ws.name, 0, 1_000_000),
      });
    }
    dumps.sort((a, b) => a.workspace.name.localeCompare(b.workspace.name));
    return { dumps, tokens: await store.listTokens(), templates: await store.listTemplates() };
  } finally {
    await store.close();
  }
}

describe("afs migrate", () => {
  let c: Cli;
  let source: string;
  const big = Buffer.alloc(9 * 1024 * 1024 + 17);

  beforeAll(async () => {
    ensureBuilt();
    c = await cli();
    source = `sqlite:${join(c.home, "afs.db")}`;
    const dir = c.tmp("tree");
    await mkdir(join(dir, "src"), { recursive: true });
    await writeFile(join(dir, "src/a.ts"), "export const a = 1;\n");
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 12)) & 0xff;
    await writeFile(join(dir, "big.bin"), big);
    c.ok(["ws", "import", "demo", dir]);
    c.ok(["fs", "write", "-w", "demo", "/notes.md"], { input: "first\n" });
    c.ok(["cp", "create", "-w", "demo", "one"]);
    c.ok(["fs", "write", "-w", "demo", "/notes.md"], { input: "second\n" });
    c.ok(["ws", "fork", "demo", "branch"]);
    c.ok(["fs", "rm", "-w", "demo", "/src/a.ts"]);
    c.ok(["token", "issue", "--workspace", "demo", "--name", "agent"]);
    c.ok(["ws", "template", "branch", "starter"]);
    const revoked = c.json<{ token_id: string }>(["token", "issue", "--workspace", "branch"]);
    c.ok(["token", "revoke", revoked.token_id]);
  }, 120_000);
  afterAll(async () => {
    await c?.cleanup();
  });

  it("copies every workspace with its history and tokens, there and back, byte for byte", async () => {
    const middle = `sqlite:${c.tmp("middle.db")}`;
    const back = `sqlite:${c.tmp("back.db")}`;
    const there = c.run(["migrate", "--from", source, "--to", middle]);
    expect(there.stderr).toBe("");
    expect(there.status).toBe(0);
    expect(there.stdout).toContain("copied 2 workspaces");
    expect(there.stdout).toContain("fsck of the target: ok");
    const result = c.json<{ workspaces: string[]; blobs_copied: number; tokens_copied: number; fsck: { ok: boolean } }>(
      ["migrate", "--from", middle, "--to", back],
    );
    expect(result.workspaces.sort()).toEqual(["branch", "demo"]);
    expect(result.tokens_copied).toBe(2);
    expect(result.fsck.ok).toBe(true);

    const original = await contents(source);
    expect(original.templates).toEqual([{ slug: "starter", workspace: "branch" }]);
    expect(original.dumps.find((d) => d.workspace.name === "demo")?.events.length).toBeGreaterThan(2);
    expect(await contents(middle)).toEqual(original);
    expect(await contents(back)).toEqual(original);

    // The copy works like the original: same files, same diff, and it goes on taking changes.
    const at = (url: string, args: string[]) => c.ok(["--store", url, ...args]);
    expect(at(back, ["fs", "cat", "-w", "branch", "/notes.md"])).toBe("second\n");
    expect(at(back, ["cp", "diff", "-w", "demo", "one"])).toBe(at(source, ["cp", "diff", "-w", "demo", "one"]));
    const out = c.tmp("exported");
    at(back, ["ws", "export", "demo", out]);
    expect((await readFile(join(out, "big.bin"))).equals(big)).toBe(true);
    c.ok(["--store", back, "fs", "write", "-w", "demo", "/after.md"], { input: "more\n" });
    expect(at(back, ["fs", "cat", "-w", "demo", "/after.md"])).toBe("more\n");
    expect(at(back, ["fsck"])).toContain("ok:");
  }, 120_000);

  it.runIf(storeEnabled("redis"))(
    "SQLite → Redis → SQLite: identical workspaces, history, tokens and templates",
    async () => {
      const redis = await startRedis();
      try {
        const middle = redis.url;
        const back = `sqlite:${c.tmp("back-from-redis.db")}`;
        const there = c.run(["migrate", "--from", source, "--to", middle]);
        expect(there.stderr).toBe("");
        expect(there.status).toBe(0);
        expect(there.stdout).toContain("copied 2 workspaces");
        expect(there.stdout).toContain("fsck of the target: ok");
        const result = c.json<{ workspaces: string[]; tokens_copied: number; fsck: { ok: boolean } }>([
          "migrate",
          "--from",
          middle,
          "--to",
          back,
        ]);
        expect(result.workspaces.sort()).toEqual(["branch", "demo"]);
        expect(result.tokens_copied).toBe(2);
        expect(result.fsck.ok).toBe(true);

        const original = await contents(source);
        expect(await contents(middle)).toEqual(original);
        expect(await contents(back)).toEqual(original);

        // On Redis and back, the copies work like the original.
        const at = (url: string, args: string[]) => c.ok(["--store", url, ...args]);
        expect(at(middle, ["fs", "cat", "-w", "branch", "/notes.md"])).toBe("second\n");
        expect(at(middle, ["cp", "diff", "-w", "demo", "one"])).toBe(at(source, ["cp", "diff", "-w", "demo", "one"]));
        const out = c.tmp("exported-from-redis");
        at(middle, ["ws", "export", "demo", out]);
        expect((await readFile(join(out, "big.bin"))).equals(big)).toBe(true);
        expect(at(back, ["cp", "diff", "-w", "demo", "one"])).toBe(at(source, ["cp", "diff", "-w", "demo", "one"]));
        expect(at(back, ["fsck"])).toContain("ok:");
      } finally {
        await redis.stop();
      }
    },
    120_000,
  );

  it("refuses to overwrite a workspace the target has, and copies only the named ones", async () => {
    const target = `sqlite:${c.tmp("partial.db")}`;
    const one = c.json<{ workspaces: string[]; tokens_copied: number }>([
      "migrate",
      "--from",
      source,
      "--to",
      target,
      "--workspace",
      "branch",
    ]);
    expect(one.workspaces).toEqual(["branch"]);
    expect(one.tokens_copied).toBe(1);
    const again = c.run(["migrate", "--from", source, "--to", target]);
    expect(again.status).not.toBe(0);
    expect(again.stderr).toContain("already has a workspace named branch");
    expect((await contents(target)).dumps.map((d) => d.workspace.name)).toEqual(["branch"]);
    const ghost = c.run(["migrate", "--from", source, "--to", target, "--workspace", "ghost"]);
    expect(ghost.status).not.toBe(0);
    expect(ghost.stderr).toContain("no workspace ghost");
    // Migrated again after the workspace went from the target: its token is there already, the same one.
    c.ok(["--store", target, "ws", "delete", "branch"]);
    const again2 = c.json<{ tokens_copied: number; tokens_present: number }>([
      "migrate",
      "--from",
      source,
      "--to",
      target,
      "--workspace",
      "branch",
    ]);
    expect(again2).toMatchObject({ tokens_copied: 0, tokens_present: 1 });
  }, 60_000);

  it("refuses a source that names no store, creating nothing (a mistyped path is not an empty store)", () => {
    const missing = join(c.tmp("nowhere"), "deeper", "afs.db");
    const target = c.tmp("from-nothing.db");
    for (const from of [missing, `sqlite:${missing}`, `file://${missing}`]) {
      const r = c.run(["migrate", "--from", from, "--to", target]);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`there is no store at`);
      expect(r.stderr).toContain("[NOT_FOUND]");
      expect(existsSync(join(c.tmp("nowhere"), "deeper"))).toBe(false);
      expect(existsSync(target)).toBe(false);
    }
  });
});
