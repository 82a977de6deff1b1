// `afs serve` end to end: the official SDK client over Streamable HTTP with bearer tokens, the
// 401/403 answers, RFC 9728 metadata, token revocation and expiry, Host/Origin checks, --auth none.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { connectHttp, issue, post, type Served, serve, toolCall } from "./serve.js";
import { ensureBuilt, type Home, home } from "./session.js";

const FILE_READS = [
  "file_read",
  "file_lines",
  "file_list",
  "file_glob",
  "file_grep",
  "file_query",
  "file_history",
  "file_read_version",
  "file_diff_versions",
  "workspace_activity",
];
const FILE_WRITES = [
  "file_restore_version",
  "file_undelete",
  "file_write",
  "file_create_exclusive",
  "file_replace",
  "file_insert",
  "file_delete_lines",
  "file_patch",
  "file_rename",
  "file_delete",
];
const CHECKPOINTS = ["checkpoint_list", "checkpoint_diff", "checkpoint_create", "checkpoint_restore"];
const sorted = (names: string[]): string[] => [...names].sort();

let h: Home;
let server: Served;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  for (const ws of ["demo", "other"]) {
    await h.afs.workspaces.create(ws);
    await write(await h.afs.workspaces.volume(ws), { path: "/readme.md", content: `# ${ws}\n` });
  }
  server = await serve(h);
});
afterAll(async () => {
  await server?.stop();
  await h?.cleanup();
});

describe("authentication", () => {
  it("publishes protected-resource metadata (RFC 9728)", async () => {
    const origin = server.url.replace(/\/mcp$/, "");
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ resource: server.url, bearer_methods_supported: ["header"] });
    }
  });

  it("answers 401 with a Bearer challenge when the header is missing or malformed", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const missing = await post(server.url, list);
    expect(missing.status).toBe(401);
    const metadata = `${server.url.replace(/\/mcp$/, "")}/.well-known/oauth-protected-resource/mcp`;
    expect(missing.headers.get("www-authenticate")).toBe(`Bearer realm="afs", resource_metadata="${metadata}"`);
    for (const header of [
      "Basic dXNlcjpwYXNz",
      "Bearer",
      "Bearer not-an-afs-token",
      `Bearer afs_${"0".repeat(16)}_${"x".repeat(43)}`,
    ]) {
      const r = await post(server.url, list, { Authorization: header });
      expect(r.status, header).toBe(401);
      expect(r.headers.get("www-authenticate"), header).toContain('error="invalid_token"');
    }
  });

  it("an SDK client without a token cannot connect", async () => {
    await expect(connectHttp(server.url, null)).rejects.toThrow();
  });
});

describe("a workspace token", () => {
  it("lists its profile's tools and works end to end, errors included", async () => {
    const { secret } = issue(h, ["--workspace", "demo"]);
    const s = await connectHttp(server.url, secret);
    expect(s.protocolVersion).toBe("2025-11-25");
    expect(sorted(s.tools.map((t) => t.name))).toEqual(sorted([...FILE_READS, ...FILE_WRITES]));
    expect(await s.ok("file_write", { path: "/notes.txt", content: "one\ntwo\n" })).toMatchObject({
      operation: "file_write",
      workspace: "demo",
      dirty: true,
    });
    expect((await s.ok("file_read", { path: "/notes.txt", workspace: "demo" })).content).toBe("one\ntwo\n");
    // The change is the token's, through MCP, in the file's history.
    const history = await s.ok<{ versions: { actor: string; surface: string }[] }>("file_history", {
      path: "/notes.txt",
    });
    expect(history.versions[0]).toMatchObject({ actor: expect.stringMatching(/^token:/), surface: "mcp" });
    const err = await s.fail("file_replace", { path: "/notes.txt", old: "missing", new: "x" });
    expect(err.code).toBe("NOT_FOUND");
    await s.close();
  });

  it("pins its workspace and profile: 403 for another workspace or a tool outside the profile", async () => {
    const { secret } = issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]);
    const auth = { Authorization: `Bearer ${secret}` };
    const otherWs = await post(server.url, toolCall("file_read", { path: "/readme.md", workspace: "other" }), auth);
    expect(otherWs.status).toBe(403);
    expect(otherWs.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    expect(JSON.stringify(otherWs.body)).toContain("workspace demo, not other");
    const writeTool = await post(server.url, toolCall("file_write", { path: "/x", content: "x" }), auth);
    expect(writeTool.status).toBe(403);
    const admin = await post(server.url, toolCall("workspace_delete", { workspace: "other" }), auth);
    expect(admin.status).toBe(403);
    expect(await h.afs.workspaces.get("other")).toMatchObject({ name: "other" });
    expect(await (await h.afs.workspaces.volume("demo")).stat("/x")).toBeNull();

    const s = await connectHttp(server.url, secret);
    expect(sorted(s.tools.map((t) => t.name))).toEqual(sorted(FILE_READS));
    await expect(s.call("file_read", { path: "/readme.md", workspace: "other" })).rejects.toThrow();
    expect((await s.ok("file_read", { path: "/readme.md" })).content).toBe("# demo\n");
    await s.close();
  });

  it("workspace-rw-checkpoint adds the checkpoint tools", async () => {
    const { secret } = issue(h, ["--workspace", "demo", "--profile", "workspace-rw-checkpoint"]);
    const s = await connectHttp(server.url, secret);
    expect(sorted(s.tools.map((t) => t.name))).toEqual(sorted([...FILE_READS, ...FILE_WRITES, ...CHECKPOINTS]));
    expect(await s.ok("checkpoint_create", { checkpoint: "http-cp" })).toMatchObject({
      workspace: "demo",
      created: true,
    });
    await s.close();
  });

  it("revocation and expiry take effect on the next request", async () => {
    const { id, secret } = issue(h, ["--workspace", "demo", "--name", "short-lived"]);
    const s = await connectHttp(server.url, secret);
    await s.ok("file_list", {});
    expect(h.run(["token", "revoke", id]).status).toBe(0);
    await expect(s.call("file_list", {})).rejects.toThrow();
    const revoked = await post(server.url, toolCall("file_list"), { Authorization: `Bearer ${secret}` });
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get("www-authenticate")).toContain("revoked");

    const soon = new Date(Date.now() + 2500).toISOString();
    const expiring = issue(h, ["--workspace", "demo", "--expires-at", soon]);
    const auth = { Authorization: `Bearer ${expiring.secret}` };
    expect((await post(server.url, toolCall("file_list"), auth)).status).toBe(200);
    await new Promise((done) => setTimeout(done, Date.parse(soon) - Date.now() + 100));
    const expired = await post(server.url, toolCall("file_list"), auth);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain("expired");

    const list = JSON.parse(h.run(["token", "list", "--json"]).stdout) as { token_id: string; status: string }[];
    expect(list.find((t) => t.token_id === id)?.status).toBe("revoked");
    expect(list.find((t) => t.token_id === expiring.id)?.status).toBe("expired");
    expect(h.run(["token", "revoke", "0123456789abcdef"]).status).toBe(3);
  });

  it("refuses what cannot be issued", () => {
    expect(h.run(["token", "issue", "--workspace", "ghost"]).status).toBe(3);
    expect(h.run(["token", "issue"]).stderr).toContain("--workspace");
    expect(h.run(["token", "issue", "--workspace", "demo", "--profile", "admin-rw"]).status).toBe(2);
    expect(h.run(["token", "issue", "--control-plane", "--profile", "workspace-ro"]).status).toBe(2);
    expect(h.run(["token", "issue", "--workspace", "demo", "--expires-at", "2001-01-01T00:00:00Z"]).status).toBe(2);
  });

  it("stores only a hash of the secret", async () => {
    const { secret } = issue(h, ["--workspace", "demo", "--name", "hashed"]);
    const listed = h.run(["token", "list", "--json"]).stdout;
    expect(listed).toContain("hashed");
    expect(listed).not.toContain(secret);
    for (const file of ["afs.db", "afs.db-wal"]) {
      const bytes = await readFile(join(h.home, file)).catch(() => Buffer.alloc(0));
      expect(bytes.includes(Buffer.from(secret)), file).toBe(false);
      expect(bytes.includes(Buffer.from(secret.slice(22))), file).toBe(false);
    }
  });
});

describe("a control-plane token", () => {
  it("admin-rw manages workspaces and tokens", async () => {
    const { secret } = issue(h, ["--control-plane", "--profile", "admin-rw"]);
    const s = await connectHttp(server.url, secret);
    const names = s.tools.map((t) => t.name);
    for (const name of ["workspace_get", "workspace_delete", "mcp_token_issue", "mcp_token_revoke", "workspace_fork"]) {
      expect(names).toContain(name);
    }
    expect(names).not.toContain("afs_status");
    expect(await s.ok("workspace_get", { workspace: "other" })).toMatchObject({ workspace: "other", head: "initial" });

    const minted = await s.ok<{ token_id: string; token: string; profile: string }>("mcp_token_issue", {
      workspace: "other",
      profile: "workspace-ro",
      name: "minted",
    });
    expect(minted.profile).toBe("workspace-ro");
    const agent = await connectHttp(server.url, minted.token);
    expect((await agent.ok("file_read", { path: "/readme.md" })).content).toBe("# other\n");
    expect(await s.ok("mcp_token_revoke", { token_id: minted.token_id })).toEqual({
      token_id: minted.token_id,
      revoked: true,
    });
    await expect(agent.call("file_read", { path: "/readme.md" })).rejects.toThrow();
    expect((await s.fail("mcp_token_revoke", { token_id: "ffffffffffffffff" })).code).toBe("NOT_FOUND");

    await s.ok("workspace_create", { workspace: "doomed" });
    expect(await s.ok("workspace_delete", { workspace: "doomed" })).toEqual({ workspace: "doomed", deleted: true });
    expect((await s.fail("workspace_get", { workspace: "doomed" })).code).toBe("NOT_FOUND");
    await s.close();
  });

  it("admin-ro (the default) reads but may not change workspaces", async () => {
    const { secret } = issue(h, ["--control-plane"]);
    const s = await connectHttp(server.url, secret);
    const names = s.tools.map((t) => t.name);
    expect(names).toContain("workspace_list");
    expect(names).toContain("checkpoint_list");
    expect(names).not.toContain("workspace_delete");
    expect(names).not.toContain("mcp_token_issue");
    expect((await s.ok("file_read", { workspace: "demo", path: "/readme.md" })).content).toBe("# demo\n");
    const del = await post(server.url, toolCall("workspace_delete", { workspace: "other" }), {
      Authorization: `Bearer ${secret}`,
    });
    expect(del.status).toBe(403);
    await s.close();
  });
});

describe("transport", () => {
  it("negotiates 2025-06-18 as well as 2025-11-25", async () => {
    const { secret } = issue(h, ["--workspace", "demo"]);
    const s = await connectHttp(server.url, secret, "2025-06-18");
    expect(s.protocolVersion).toBe("2025-06-18");
    expect((await s.ok("file_read", { path: "/readme.md" })).content).toBe("# demo\n");
    await s.close();
  });

  it("refuses foreign Host and Origin headers (DNS rebinding)", async () => {
    const { secret } = issue(h, ["--workspace", "demo"]);
    const auth = { Authorization: `Bearer ${secret}` };
    const { port } = new URL(server.url);
    const list = toolCall("file_list");
    expect((await post(server.url, list, { ...auth, Origin: "http://evil.example" })).status).toBe(403);
    expect((await post(server.url, list, { ...auth, Origin: `http://localhost:${port}` })).status).toBe(200);
    // fetch will not forge Host; node:http will.
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(server.url, { method: "POST", headers: { Host: `evil.example:${port}`, ...auth } }, (res) =>
        resolve(res.statusCode ?? 0),
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(status).toBe(403);
  });

  it("GET /mcp is 405 (stateless, no SSE stream); other paths are the console, unknown API paths 404", async () => {
    const { secret } = issue(h, ["--workspace", "demo"]);
    const get = await fetch(server.url, {
      headers: { Authorization: `Bearer ${secret}`, Accept: "text/event-stream" },
    });
    expect(get.status).toBe(405);
    const page = await fetch(server.url.replace(/\/mcp$/, "/elsewhere"));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const api = await fetch(server.url.replace(/\/mcp$/, "/api/elsewhere"), {
      headers: { Authorization: `Bearer ${secret}` },
    });
    expect(api.status).toBe(404);
  });
});

describe("separate servers", () => {
  it("caps the request body", async () => {
    const small = await serve(h, [], { AFS_MAX_HTTP_BODY_BYTES: "2000" });
    try {
      const { secret } = issue(h, ["--workspace", "demo"]);
      const big = toolCall("file_write", { path: "/big", content: "x".repeat(5000) });
      const r = await post(small.url, big, { Authorization: `Bearer ${secret}` });
      expect(r.status).toBe(413);
      expect(await (await h.afs.workspaces.volume("demo")).stat("/big")).toBeNull();
    } finally {
      await small.stop();
    }
  });

  it("--auth none runs on loopback only, and says so", async () => {
    const open = h.run(["serve", "--host", "0.0.0.0", "--port", "0", "--auth", "none"]);
    expect(open.status).toBe(2);
    expect(open.stderr).toContain("only allowed on a loopback address");

    const local = await serve(h, ["--auth", "none", "--profile", "workspace-ro", "--workspace", "demo"]);
    try {
      expect(local.stderr()).toContain("--auth none");
      const s = await connectHttp(local.url, null);
      expect(sorted(s.tools.map((t) => t.name))).toEqual(sorted(FILE_READS));
      expect((await s.ok("file_read", { path: "/readme.md" })).content).toBe("# demo\n");
      await s.close();
    } finally {
      await local.stop();
    }
  });
});
