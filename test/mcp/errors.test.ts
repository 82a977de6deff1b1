// Failures over stdio: error results reach the SDK client intact (isError, a one-line text, and
// structuredContent.error.code that passes the output schema), limits answer QUOTA_EXCEEDED,
// startup refuses what it cannot serve, and the handshake accepts 2025-06-18 and 2025-11-25; on
// each tested store.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { MAIN } from "../cli/run.js";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, type Session, storeHomes } from "./session.js";

describe.each(testStores())("stdio errors on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let s: Session;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    await h.afs.workspaces.create("demo");
    const volume = await h.afs.workspaces.volume("demo");
    await write(volume, { path: "/twice.txt", content: "same\nother\nsame\n" });
    for (let i = 0; i < 5; i++) await write(volume, { path: `/many/f${i}.txt`, content: `needle ${i}\n`.repeat(3) });
    await write(volume, { path: "/big.txt", content: `${"x".repeat(99)}\n` });
    s = await h.connect(["mcp", "--workspace", "demo"]);
  });
  afterAll(() => h?.cleanup());

  describe("error results through the SDK client", () => {
    it("an ambiguous replace says where old matched, and nothing changes", async () => {
      const r = await s.call("file_replace", { path: "/twice.txt", old: "same", new: "diff" });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toEqual({
        error: {
          code: "INVALID_ARGUMENT",
          message: expect.stringMatching(/matches 2 times \(lines 1, 3\).*start_line, or pass all=true/),
          details: { path: "/twice.txt", count: 2, lines: [1, 3] },
        },
      });
      const [block] = r.content;
      expect(block).toMatchObject({
        type: "text",
        text: expect.stringMatching(/^INVALID_ARGUMENT: old text matches 2 times/),
      });
      expect(block?.type === "text" && block.text.includes("\n")).toBe(false);
      expect((await s.ok("file_read", { path: "/twice.txt" })).content).toBe("same\nother\nsame\n");
    });

    it("NOT_FOUND for missing text and missing files", async () => {
      const missing = await s.fail("file_replace", { path: "/twice.txt", old: "absent", new: "x" });
      expect(missing.code).toBe("NOT_FOUND");
      expect(missing.message).toContain("copy old exactly");
      const gone = await s.fail("file_read", { path: "/nope.txt" });
      expect(gone).toMatchObject({
        code: "NOT_FOUND",
        text: expect.stringMatching(/^NOT_FOUND: \/nope.txt does not exist/),
      });
    });

    it("CONFLICT when expected_sha256 is stale", async () => {
      const stale = "0".repeat(64);
      const r = await s.fail("file_write", { path: "/twice.txt", content: "new", expected_sha256: stale });
      expect(r.code).toBe("CONFLICT");
      expect(r.message).toContain("read it again");
    });

    it("INVALID_ARGUMENT names the bad argument, including unknown ones; INVALID_PATH for escapes", async () => {
      const wrongType = await s.fail("file_lines", { path: "/twice.txt", start: "one" });
      expect(wrongType).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("start:") });
      const unknown = await s.fail("file_read", { path: "/twice.txt", bogus: true });
      expect(unknown).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("bogus") });
      const escaped = await s.fail("file_read", { path: "/../../etc/passwd" });
      expect(escaped).toMatchObject({ code: "INVALID_PATH", message: expect.stringContaining("escapes the root") });
    });

    it("a refused tool is PERMISSION_DENIED with the profiles that allow it", async () => {
      const r = await s.fail("checkpoint_create", {});
      expect(r.code).toBe("PERMISSION_DENIED");
      expect(r.message).toContain("workspace-rw-checkpoint");
    });

    it("an admin session with no workspace at all asks for one", async () => {
      const admin = await h.connect(["mcp", "--profile", "admin-ro"]);
      expect((await admin.ok("afs_status")).session_workspace).toBeNull();
      const r = await admin.fail("file_list", {});
      expect(r).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("pass workspace") });
      expect(await admin.ok("file_list", { workspace: "demo", path: "/many" })).toMatchObject({ path: "/many" });
      await admin.close();
    });
  });

  describe("limits", () => {
    let limited: Session;
    beforeAll(async () => {
      limited = await h.connect(["mcp", "--workspace", "demo"], {
        env: { AFS_MAX_READ_BYTES: "64", AFS_MAX_WRITE_BYTES: "100", AFS_MAX_RESULTS: "3" },
      });
    });

    it("file_read of a file over the cap points to file_lines; file_lines still works", async () => {
      const r = await limited.fail("file_read", { path: "/big.txt" });
      expect(r).toMatchObject({ code: "QUOTA_EXCEEDED", message: expect.stringContaining("file_lines") });
      expect(await limited.ok("file_read", { path: "/many/f0.txt" })).toMatchObject({ size: 27 });
      expect((await limited.fail("file_lines", { path: "/big.txt", start: 1 })).code).toBe("QUOTA_EXCEEDED");
      expect(await limited.ok("file_lines", { path: "/many/f0.txt", start: 2, end: 2 })).toMatchObject({
        content: "needle 0\n",
      });
    });

    it("writes over the cap are refused and leave nothing behind", async () => {
      const r = await limited.fail("file_write", { path: "/huge.txt", content: "y".repeat(101) });
      expect(r.code).toBe("QUOTA_EXCEEDED");
      expect((await limited.fail("file_read", { path: "/huge.txt" })).code).toBe("NOT_FOUND");
      const patch = await limited.fail("file_patch", {
        path: "/many/f0.txt",
        patches: [
          { op: "insert", start_line: 0, new: "z".repeat(60) },
          { op: "insert", start_line: 0, new: "z".repeat(60) },
        ],
      });
      expect(patch.code).toBe("QUOTA_EXCEEDED");
      expect(await limited.ok("file_write", { path: "/small.txt", content: "y".repeat(100) })).toMatchObject({
        size: 100,
      });
    });

    it("list, glob and grep stop at the result cap with truncated: true", async () => {
      const list = await limited.ok<{ items: unknown[]; truncated: boolean }>("file_list", { path: "/many" });
      expect(list.items).toHaveLength(3);
      expect(list.truncated).toBe(true);
      const glob = await limited.ok<{ count: number; items: unknown[]; truncated: boolean }>("file_glob", {
        pattern: "f*.txt",
      });
      expect(glob).toMatchObject({ count: 5, truncated: true });
      expect(glob.items).toHaveLength(3);
      const grep = await limited.ok<{ matches: unknown[]; truncated: boolean }>("file_grep", { pattern: "needle" });
      expect(grep.matches).toHaveLength(3);
      expect(grep.truncated).toBe(true);
      const few = await limited.ok<{ truncated: boolean }>("file_grep", {
        pattern: "needle 4",
        files_with_matches: true,
      });
      expect(few.truncated).toBe(false);
    });

    it("a malformed limit is refused at startup", () => {
      const r = h.run(["mcp", "--workspace", "demo"], { AFS_MAX_RESULTS: "lots" });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("AFS_MAX_RESULTS");
    });
  });

  describe("startup", () => {
    it("a workspace-bound profile without a workspace exits with a clear error", () => {
      const r = h.run(["mcp"]);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/profile workspace-rw works on one workspace.*--workspace NAME.*afs ws use NAME/);
      expect(h.run(["mcp", "--profile", "workspace-ro"]).status).toBe(2);
    });

    it("an unknown workspace or profile is refused", () => {
      const ghost = h.run(["mcp", "--workspace", "ghost"]);
      expect(ghost.status).toBe(3);
      expect(ghost.stderr).toContain("workspace ghost does not exist");
      const profile = h.run(["mcp", "--workspace", "demo", "--profile", "root"]);
      expect(profile.status).toBe(2);
      expect(profile.stderr).toContain("workspace-ro, workspace-rw");
    });

    it("the current workspace (afs ws use) binds a session", async () => {
      expect(h.run(["ws", "use", "demo"]).status).toBe(0);
      const cur = await h.connect(["mcp"]);
      expect((await cur.ok("file_read", { path: "/twice.txt" })).workspace).toBe("demo");
      await cur.close();
    });
  });

  describe("protocol", () => {
    it("negotiates 2025-11-25 (the SDK's latest) and 2025-06-18", async () => {
      expect(s.protocolVersion).toBe("2025-11-25");
      const old = await h.connect(["mcp", "--workspace", "demo"], { protocolVersion: "2025-06-18" });
      expect(old.protocolVersion).toBe("2025-06-18");
      expect(old.tools.map((t) => t.name)).toContain("file_read");
      expect((await old.ok("file_read", { path: "/twice.txt" })).content).toBe("same\nother\nsame\n");
      expect((await old.fail("file_read", { path: "/nope" })).code).toBe("NOT_FOUND");
      await old.close();
    });

    it("stdout carries only JSON-RPC lines, and end of stdin ends the server", async () => {
      const child = spawn(process.execPath, [MAIN, "mcp", "--workspace", "demo"], { env: h.env });
      const lines: string[] = [];
      createInterface({ input: child.stdout }).on("line", (line) => lines.push(line));
      const exited = new Promise<number | null>((done) => child.on("exit", done));
      const init = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      };
      const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
      child.stdin.write(
        `${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`,
      );
      child.stdin.end(`${JSON.stringify(list)}\n`);
      expect(await exited).toBe(0);
      expect(lines).toHaveLength(2);
      const parsed = lines.map((l) => JSON.parse(l) as { id: number; result: Record<string, unknown> });
      expect(parsed.map((m) => m.id).sort()).toEqual([1, 2]);
      expect(parsed.find((m) => m.id === 1)?.result.protocolVersion).toBe("2025-06-18");
    });
  });
});
