// Every stdio tool end to end, once per tested store: the official SDK client drives
// `afs mcp --profile admin-rw` and checks each result against the tool's declared output schema.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QueryResult } from "../../src/ops/index.js";
import { testStores } from "../contract/stores.js";
import { ensureBuilt, type Home, type Session, storeHomes } from "./session.js";

const sha = (s: string | Buffer): string => createHash("sha256").update(s).digest("hex");
const text = (r: { content: unknown[] }): string => {
  const first = r.content[0] as { type: string; text?: string } | undefined;
  return first?.type === "text" ? (first.text ?? "") : "";
};

const APP =
  "import { wait } from './wait';\n\nexport async function retry(fn) {\n  // exponential backoff between attempts\n  return backoff(fn);\n}\n";
const NOTES = "meeting notes\nretry later\n";

describe.each(testStores())("afs mcp tools on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let s: Session;
  let noEmbeddings: Session;

  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    s = await h.connect(["mcp", "--profile", "admin-rw"]);
  });
  afterAll(() => h?.cleanup());

  it("lists the stdio tools with annotations and output schemas that admit the error shape", () => {
    const names = s.tools.map((t) => t.name).sort();
    expect(names).toContain("afs_status");
    expect(names).not.toContain("workspace_get");
    expect(names).not.toContain("workspace_delete");
    const read = s.tools.find((t) => t.name === "file_read");
    expect(read?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    expect(read?.inputSchema.required).toEqual(["path"]);
    expect(Object.keys(read?.inputSchema.properties ?? {})).toEqual(["path", "encoding", "workspace", "checkpoint"]);
    const del = s.tools.find((t) => t.name === "file_delete");
    expect(del?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    for (const tool of s.tools) {
      expect(tool.outputSchema?.type).toBe("object");
      expect(JSON.stringify(tool.outputSchema)).toContain('"error"');
      expect(tool.description?.length ?? 0).toBeGreaterThan(40);
    }
  });

  it("afs_status reports the home, store, version and session", async () => {
    const r = await s.ok("afs_status");
    expect(r).toMatchObject({ home: h.home, profile: "admin-rw", session_workspace: null, current_workspace: null });
    // SQLite's file lives in the home; a Redis store is shown by its URL.
    expect(r.store).toContain(h.store ?? h.home);
    expect(r.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("workspace_create, workspace_list", async () => {
    const created = await s.ok("workspace_create", { workspace: "demo", description: "the demo", set_current: true });
    expect(created).toMatchObject({
      workspace: "demo",
      description: "the demo",
      head: "initial",
      dirty: false,
      current: true,
    });
    const list = await s.ok<{ workspaces: { name: string }[]; current: string }>("workspace_list");
    expect(list.workspaces.map((w) => w.name)).toEqual(["demo"]);
    expect(list.current).toBe("demo");
    expect((await s.fail("workspace_create", { workspace: "demo" })).code).toBe("ALREADY_EXISTS");
  });

  it("file_write reports the mutation; file_read returns the content and hash", async () => {
    const w = await s.call("file_write", { path: "src/app.ts", content: APP });
    expect(w.structuredContent).toEqual({
      operation: "file_write",
      workspace: "demo",
      path: "/src/app.ts",
      kind: "file",
      size: Buffer.byteLength(APP),
      sha256: sha(APP),
      revision: expect.any(Number),
      dirty: true,
    });
    expect(text(w)).toContain("/src/app.ts");
    await s.ok("file_write", { path: "/docs/notes.md", content: NOTES });
    const r = await s.call("file_read", { path: "/src/app.ts" });
    expect(r.structuredContent).toMatchObject({ workspace: "demo", kind: "file", content: APP, sha256: sha(APP) });
    expect(text(r)).toContain(APP);
  });

  it("file_read marks binary files and returns base64 on request", async () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    await s.ok("file_write", { path: "/bin/blob", content: bytes.toString("base64"), encoding: "base64" });
    expect(await s.ok("file_read", { path: "/bin/blob" })).toMatchObject({ binary: true, size: 4, sha256: sha(bytes) });
    expect((await s.ok("file_read", { path: "/bin/blob" })).content).toBeUndefined();
    const b64 = await s.ok("file_read", { path: "/bin/blob", encoding: "base64" });
    expect(b64.content).toBe(bytes.toString("base64"));
  });

  it("file_lines returns a range with the total", async () => {
    const r = await s.ok("file_lines", { path: "/src/app.ts", start: 3, end: 4 });
    expect(r).toMatchObject({ start: 3, end: 4, total_lines: 6, sha256: sha(APP) });
    expect(r.content).toBe("export async function retry(fn) {\n  // exponential backoff between attempts\n");
  });

  it("file_list and file_glob find entries", async () => {
    const top = await s.ok<{ items: { path: string; kind: string }[]; truncated: boolean }>("file_list", {});
    expect(top.items.map((i) => i.path)).toEqual(["/bin", "/docs", "/src"]);
    expect(top.truncated).toBe(false);
    const deep = await s.ok<{ items: { path: string }[] }>("file_list", { path: "/", depth: 2 });
    expect(deep.items.map((i) => i.path)).toContain("/src/app.ts");
    const glob = await s.ok<{ count: number; items: { path: string; name: string }[] }>("file_glob", {
      pattern: "*.ts",
    });
    expect(glob.count).toBe(1);
    expect(glob.items[0]).toMatchObject({ path: "/src/app.ts", name: "app.ts" });
    const dirs = await s.ok<{ items: { path: string }[] }>("file_glob", { pattern: "*", kind: "dir" });
    expect(dirs.items.map((i) => i.path)).toEqual(["/bin", "/docs", "/src"]);
  });

  it("file_grep returns context, filters paths, and pages past limit with a cursor", async () => {
    const ctx = await s.call("file_grep", { pattern: "backoff", context_before: 1, context_after: 1, include: "*.ts" });
    expect(ctx.structuredContent).toEqual({
      mode: "matches",
      matches: [
        {
          path: "/src/app.ts",
          line: 4,
          text: "  // exponential backoff between attempts",
          before: ["export async function retry(fn) {"],
          after: ["  return backoff(fn);"],
        },
        {
          path: "/src/app.ts",
          line: 5,
          text: "  return backoff(fn);",
          before: ["  // exponential backoff between attempts"],
          after: ["}"],
        },
      ],
      truncated: false,
    });
    expect(text(ctx)).toBe(
      [
        "/src/app.ts-3-export async function retry(fn) {",
        "/src/app.ts:4:  // exponential backoff between attempts",
        "/src/app.ts:5:  return backoff(fn);",
        "/src/app.ts-6-}",
      ].join("\n"),
    );
    expect(await s.ok("file_grep", { pattern: "retry", exclude: ["src"], files_with_matches: true })).toEqual({
      mode: "files",
      files: ["/docs/notes.md"],
      truncated: false,
    });
    const first = await s.call("file_grep", { pattern: "e", limit: 2 });
    const page = first.structuredContent as { matches: { path: string; line: number }[]; cursor?: string };
    expect(page).toMatchObject({ truncated: true, cursor: expect.any(String) });
    expect(text(first)).toContain(`pass cursor ${JSON.stringify(page.cursor)}`);
    const seen = [...page.matches];
    for (let cursor = page.cursor; cursor; ) {
      const next = await s.ok<{ matches: { path: string; line: number }[]; cursor?: string }>("file_grep", {
        pattern: "e",
        limit: 2,
        cursor,
      });
      seen.push(...next.matches);
      cursor = next.cursor;
    }
    const all = await s.ok<{ matches: { path: string; line: number }[] }>("file_grep", { pattern: "e" });
    expect(seen).toEqual(all.matches);
    expect((await s.fail("file_grep", { pattern: "x", cursor: page.cursor })).code).toBe("INVALID_ARGUMENT");
  });

  it("file_grep answers in its three modes", async () => {
    const m = await s.call("file_grep", { pattern: "retry" });
    expect(m.structuredContent).toEqual({
      mode: "matches",
      matches: [
        { path: "/docs/notes.md", line: 2, text: "retry later" },
        { path: "/src/app.ts", line: 3, text: "export async function retry(fn) {" },
      ],
      truncated: false,
    });
    expect(text(m)).toContain("/src/app.ts:3:export async function retry(fn) {");
    expect(await s.ok("file_grep", { pattern: "RETRY", ignore_case: true, files_with_matches: true })).toEqual({
      mode: "files",
      files: ["/docs/notes.md", "/src/app.ts"],
      truncated: false,
    });
    expect(await s.ok("file_grep", { pattern: "^\\s", regexp: true, count: true })).toEqual({
      mode: "counts",
      counts: [{ path: "/src/app.ts", count: 2 }],
      truncated: false,
    });
  });

  it("file_query ranks the chunk with more of the query's words first, keyword only without a provider", async () => {
    // Its own session, without whatever OpenAI key the environment may hold.
    noEmbeddings = await h.connect(["mcp", "--profile", "admin-rw", "--workspace", "demo"], {
      env: { OPENAI_API_KEY: "" },
    });
    const s = noEmbeddings;
    const r = await s.call("file_query", { query: "how is the retry backoff done" });
    const out = r.structuredContent as unknown as QueryResult;
    expect(out.status).toBe("ok");
    expect(out.results.map((x) => x.path)).toEqual(["/src/app.ts", "/docs/notes.md"]);
    const [first, second] = out.results;
    expect(first?.score).toBeGreaterThan(second?.score ?? Number.POSITIVE_INFINITY);
    expect(first).toMatchObject({ start_line: 1, end_line: 6, search_types: ["lex"] });
    expect(first?.chunk_id).toMatch(/^[0-9a-f]{12}#0$/);
    expect(first?.snippet).toContain("backoff");
    expect(out.warnings).toEqual([
      expect.stringMatching(/^ranked by keyword only: semantic search is off.*OPENAI_API_KEY/),
    ]);
    expect(text(r)).toContain("/src/app.ts:1-6 (score ");
    const none = await s.ok<{ results: unknown[] }>("file_query", { query: "nothing-like-this", mode: "keyword" });
    expect(none).toEqual({ status: "ok", results: [], warnings: [] });
    expect((await s.ok<{ results: unknown[] }>("file_query", { query: "retry", limit: 1 })).results).toHaveLength(1);
  });

  it("file_query: typed query documents, explain, exclusions, and semantic mode unavailable without a provider", async () => {
    const s = noEmbeddings;
    const typed = await s.ok<{ results: { path: string }[]; explain: { searches: unknown[]; results: unknown[] } }>(
      "file_query",
      { query: "lex: retry -backoff\nintent: meeting", mode: "keyword", explain: true },
    );
    expect(typed.results.map((x) => x.path)).toEqual(["/docs/notes.md"]);
    expect(typed.explain).toMatchObject({
      mode: "keyword",
      fusion: "none",
      rerank: "none",
      searches: [{ type: "lex", query: "retry -backoff", candidates: 1 }],
      results: [
        { path: "/docs/notes.md", components: [{ search: 0, type: "lex", rank: 1, bm25: expect.any(Number) }] },
      ],
    });
    const semantic = await s.call("file_query", { query: "how do we wait between attempts", mode: "semantic" });
    expect(semantic.isError).toBeFalsy();
    expect(semantic.structuredContent).toEqual({
      status: "unavailable",
      results: [],
      warnings: [expect.stringMatching(/no embedding provider is configured; set OPENAI_API_KEY/)],
    });
    expect((await s.fail("file_query", { query: "x", path: "/nope" })).code).toBe("NOT_FOUND");
    expect((await s.fail("file_query", { query: "lex: a\nplain" })).code).toBe("INVALID_ARGUMENT");
  });

  it("file_create_exclusive wins once", async () => {
    expect(await s.ok("file_create_exclusive", { path: "/lock", content: "me" })).toMatchObject({
      operation: "file_create_exclusive",
      path: "/lock",
      size: 2,
    });
    expect((await s.fail("file_create_exclusive", { path: "/lock", content: "you" })).code).toBe("ALREADY_EXISTS");
  });

  it("file_replace, file_insert, file_delete_lines, file_patch edit text", async () => {
    const rep = await s.ok("file_replace", { path: "/docs/notes.md", old: "later", new: "soon" });
    expect(rep).toMatchObject({
      operation: "file_replace",
      replacements: 1,
      sha256: sha("meeting notes\nretry soon\n"),
    });
    const ins = await s.ok("file_insert", { path: "/docs/notes.md", line: 0, content: "# Notes" });
    expect(ins).toMatchObject({ inserted_lines: 1, line: 0 });
    const del = await s.ok("file_delete_lines", { path: "/docs/notes.md", start: 2, end: 2 });
    expect(del).toMatchObject({ deleted_lines: 1 });
    const before = "# Notes\nretry soon\n";
    expect((await s.ok("file_read", { path: "/docs/notes.md" })).content).toBe(before);
    const patched = await s.ok("file_patch", {
      path: "/docs/notes.md",
      expected_sha256: sha(before),
      patches: [
        { op: "replace", old: "soon", new: "never" },
        { op: "insert", start_line: -1, new: "the end" },
      ],
    });
    expect(patched).toMatchObject({ patches_applied: 2, sha256: sha("# Notes\nretry never\nthe end\n") });
  });

  it("file_rename moves and file_delete removes", async () => {
    const mv = await s.ok("file_rename", { path: "/lock", new_path: "/locks/a" });
    expect(mv).toMatchObject({ operation: "file_rename", path: "/locks/a", old_path: "/lock" });
    expect((await s.fail("file_read", { path: "/lock" })).code).toBe("NOT_FOUND");
    const rm = await s.ok("file_delete", { path: "/locks", recursive: true });
    expect(rm).toMatchObject({ operation: "file_delete", path: "/locks", kind: "deleted", sha256: null });
  });

  it("checkpoint_create, checkpoint_list (newest first), checkpoint_diff, checkpoint_restore", async () => {
    const cp = await s.ok("checkpoint_create", { checkpoint: "v1", description: "first" });
    expect(cp).toMatchObject({
      workspace: "demo",
      checkpoint: "v1",
      created: true,
      kind: "manual",
      description: "first",
    });
    const again = await s.ok("checkpoint_create", {});
    expect(again).toMatchObject({ created: false, checkpoint: "v1" });

    const list = await s.ok<{ head: string; dirty: boolean; checkpoints: { name: string }[] }>("checkpoint_list");
    expect(list).toMatchObject({ head: "v1", dirty: false });
    expect(list.checkpoints.map((c) => c.name)).toEqual(["v1", "initial"]);

    await s.ok("file_write", { path: "/docs/notes.md", content: "changed\n" });
    await s.ok("file_write", { path: "/new.txt", content: "new\n" });
    const diff = await s.ok<{
      target: string;
      summary: unknown;
      changes: { path: string; status: string; patch?: string }[];
    }>("checkpoint_diff", { base: "v1" });
    expect(diff.target).toBe("live");
    expect(diff.summary).toEqual({ added: 1, modified: 1, deleted: 0, renamed: 0 });
    expect(diff.changes.map((c) => [c.status, c.path])).toEqual([
      ["modified", "/docs/notes.md"],
      ["added", "/new.txt"],
    ]);
    expect(diff.changes[0]?.patch).toContain("+changed");
    const fromInitial = await s.ok<{ target: string }>("checkpoint_diff", { base: "initial", target: "v1" });
    expect(fromInitial.target).toBe("v1");

    const restored = await s.ok<{ checkpoint: string; safety_checkpoint: string | null }>("checkpoint_restore", {
      checkpoint: "v1",
    });
    expect(restored.checkpoint).toBe("v1");
    expect(restored.safety_checkpoint).toMatch(/^safety-/);
    expect((await s.ok("file_read", { path: "/docs/notes.md" })).content).toBe("# Notes\nretry never\nthe end\n");
    expect((await s.fail("file_read", { path: "/new.txt" })).code).toBe("NOT_FOUND");
    expect((await s.fail("checkpoint_restore", { checkpoint: "nope" })).code).toBe("NOT_FOUND");
  });

  it("workspace_fork starts a second line of work; workspace overrides the session's", async () => {
    await s.ok("file_write", { path: "/wip.txt", content: "uncommitted\n" });
    const fork = await s.ok("workspace_fork", { workspace: "demo", new_workspace: "demo2" });
    expect(fork).toMatchObject({ workspace: "demo2", source: "demo" });
    await s.ok("file_write", { workspace: "demo2", path: "/wip.txt", content: "only in the fork\n" });
    expect((await s.ok("file_read", { workspace: "demo2", path: "/wip.txt" })).content).toBe("only in the fork\n");
    expect((await s.ok("file_read", { path: "/wip.txt" })).content).toBe("uncommitted\n");
    expect((await s.fail("file_read", { workspace: "ghost", path: "/wip.txt" })).code).toBe("NOT_FOUND");
  });

  it("the engine sees what the tools wrote", async () => {
    const volume = await h.afs.workspaces.volume("demo2");
    expect((await volume.readFile("/wip.txt")).toString()).toBe("only in the fork\n");
  });
});
