// Both MCP revisions on both transports, with the official SDK v2 client: a 2026-07-28 client
// (stateless, `_meta` envelope on each request) and a 2025-11-25 one (initialize) against the built
// `afs serve` with bearer tokens and `afs mcp` over stdio; the 2026-07-28 wire seen raw (resultType,
// caching hints, header validation, -32602 for a bad envelope); tokens and the 403 scope check
// before anything runs on 2026-07-28 requests too.
import {
  type CallToolResult,
  Client,
  ProtocolError,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { read, write } from "../../src/ops/index.js";
import { MAIN } from "../cli/run.js";
import { issue, type Served, serve } from "./serve.js";
import { ensureBuilt, type Home, home } from "./session.js";

const MODERN = "2026-07-28";
type Mode = "legacy" | "auto" | { pin: string };
const REVISIONS: readonly [string, Mode, string][] = [
  ["2026-07-28", { pin: MODERN }, "modern"],
  ["2025-11-25", "legacy", "legacy"],
];

let h: Home;
let server: Served;
const clients: Client[] = [];

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
  await Promise.allSettled(clients.map((c) => c.close()));
  await server?.stop();
  await h?.cleanup();
});

async function connect(transport: Transport, mode: Mode): Promise<Client> {
  const client = new Client({ name: "afs-test-v2", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const overHttp = (token: string, mode: Mode) =>
  connect(
    new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
    mode,
  );

const overStdio = (args: readonly string[], mode: Mode) =>
  connect(
    new StdioClientTransport({ command: process.execPath, args: [MAIN, "mcp", ...args], env: h.env, stderr: "pipe" }),
    mode,
  );

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** The same session work on either revision: list, write, read back, an error result, an unknown tool. */
async function exercise(client: Client, ws: string, path: string) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  expect(names).toContain("file_write");
  const fileRead = tools.find((t) => t.name === "file_read");
  expect(fileRead?.outputSchema).toMatchObject({ type: "object" });
  expect(JSON.stringify(fileRead?.inputSchema)).not.toContain("$schema");

  const wrote = await call(client, "file_write", { path, content: "hello\n" });
  expect(wrote.isError ?? false).toBe(false);
  expect(wrote.structuredContent).toMatchObject({
    operation: "file_write",
    workspace: ws,
    path,
    kind: "file",
    size: 6,
  });
  const back = await call(client, "file_read", { path });
  expect(back.structuredContent).toMatchObject({ path, content: "hello\n" });
  expect(await read(await h.afs.workspaces.volume(ws), { path })).toMatchObject({ content: "hello\n" });

  const missing = await call(client, "file_read", { path: "/no/such/file" });
  expect(missing.isError).toBe(true);
  expect(missing.structuredContent).toMatchObject({ error: { code: "NOT_FOUND" } });

  const unknown = await call(client, "no_such_tool", {}).catch((e: unknown) => e);
  expect(unknown).toBeInstanceOf(ProtocolError);
  expect((unknown as ProtocolError).code).toBe(-32602);
  return names;
}

describe("afs serve (HTTP, bearer token), SDK v2 client", () => {
  for (const [version, mode, era] of REVISIONS) {
    it(`${version}: lists the token's tools and calls them with structured results`, async () => {
      const { secret } = issue(h, ["--workspace", "demo", "--profile", "workspace-rw"]);
      const client = await overHttp(secret, mode);
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      const names = await exercise(client, "demo", `/http-${era}.txt`);
      expect(names).not.toContain("checkpoint_create");
      expect(names).not.toContain("workspace_create");
    });
  }

  it("a negotiating client (auto) settles on 2026-07-28", async () => {
    const { secret } = issue(h, ["--workspace", "demo"]);
    const client = await overHttp(secret, "auto");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
  });
});

describe("afs mcp (stdio), SDK v2 client", () => {
  for (const [version, mode, era] of REVISIONS) {
    it(`${version}: the opening message picks the revision, and tools work on it`, async () => {
      const client = await overStdio(["--workspace", "demo", "--profile", "workspace-rw-checkpoint"], mode);
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      const names = await exercise(client, "demo", `/stdio-${era}.txt`);
      expect(names).toContain("checkpoint_create");
      const cp = await call(client, "checkpoint_create", { checkpoint: `cp-${era}` });
      expect(cp.structuredContent).toMatchObject({ checkpoint: `cp-${era}`, created: true });
    });
  }
});

describe("afs mcp (stdio), a negotiating SDK v2 client", () => {
  it("settles on 2026-07-28 through its server/discover probe", async () => {
    const client = await overStdio(["--workspace", "demo", "--profile", "workspace-ro"], "auto");
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const got = await call(client, "file_read", { path: "/readme.md" });
    expect(got.structuredContent).toMatchObject({ content: "# demo\n" });
  });
});

// The 2026-07-28 wire, as a client without the SDK sends it.
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Reply {
  id?: unknown;
  result?: Record<string, unknown> & { tools?: { name: string }[] };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

async function modern(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
  meta: Record<string, unknown> = ENVELOPE,
) {
  // Mcp-Name repeats the tool name of a tools/call, the URI of a resources/read.
  const named = params.name ?? params.uri;
  const name: Record<string, string> = typeof named === "string" ? { "Mcp-Name": named } : {};
  const res = await fetch(server.url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": MODERN,
      "Mcp-Method": method,
      ...name,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: meta } }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as Reply };
}

describe("the 2026-07-28 wire on afs serve", () => {
  let auth: Record<string, string>;
  beforeAll(() => {
    auth = { Authorization: `Bearer ${issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]).secret}` };
  });

  it("server/discover names the revision, the tools capability and the server, with caching hints", async () => {
    const r = await modern("server/discover", {}, auth);
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    expect(r.body.result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      resultType: "complete",
      ttlMs: 300_000,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "afs" } },
    });
  });

  it("tools/list carries ttlMs and cacheScope; tools/call carries resultType and structuredContent", async () => {
    const list = await modern("tools/list", {}, auth);
    expect(list.body.result).toMatchObject({ resultType: "complete", ttlMs: 300_000, cacheScope: "private" });
    expect(list.body.result?.tools?.map((t: { name: string }) => t.name)).not.toContain("file_write");
    const got = await modern("tools/call", { name: "file_read", arguments: { path: "/readme.md" } }, auth);
    expect(got.body.result).toMatchObject({
      resultType: "complete",
      structuredContent: { path: "/readme.md", content: "# demo\n" },
    });
  });

  it("lists and reads workspace files as resources with caching hints; a missing one is -32602 naming its URI", async () => {
    const list = await modern("resources/list", {}, auth);
    expect(list.body.result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    expect(list.body.result?.resources).toEqual(
      expect.arrayContaining([expect.objectContaining({ uri: "afs://demo/readme.md" })]),
    );
    const templates = await modern("resources/templates/list", {}, auth);
    expect(templates.body.result).toMatchObject({ cacheScope: "public" });
    const got = await modern("resources/read", { uri: "afs://demo/readme.md" }, auth);
    expect(got.body.result).toMatchObject({ contents: [{ uri: "afs://demo/readme.md", text: "# demo\n" }] });
    const missing = await modern("resources/read", { uri: "afs://demo/nope.md" }, auth);
    expect(missing.body.error).toMatchObject({ code: -32602, data: { code: "NOT_FOUND", uri: "afs://demo/nope.md" } });
    const elsewhere = await modern("resources/read", { uri: "afs://other/readme.md" }, auth);
    expect(elsewhere.body.error?.code).toBe(-32602);
  });

  it("refuses what the spec refuses: a header that disagrees with the body, a request without its envelope", async () => {
    const mismatch = await modern(
      "tools/call",
      { name: "file_read", arguments: { path: "/a" } },
      {
        ...auth,
        "Mcp-Name": "file_list",
      },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.code).toBe(-32020);
    expect(mismatch.body.id).toBe(7);
    const noCapabilities = await modern("tools/list", {}, auth, { "io.modelcontextprotocol/protocolVersion": MODERN });
    expect(noCapabilities.body.error?.code).toBe(-32602);
  });

  it("keeps the token rules: 401 without one, 403 before anything runs for a tool or workspace outside it", async () => {
    const anonymous = await modern("tools/list", {}, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("resource_metadata=");
    const outside = await modern("tools/call", { name: "file_write", arguments: { path: "/x", content: "x" } }, auth);
    expect(outside.status).toBe(403);
    expect(outside.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    const elsewhere = await modern(
      "tools/call",
      { name: "file_read", arguments: { path: "/readme.md", workspace: "other" } },
      auth,
    );
    expect(elsewhere.status).toBe(403);
    await expect(read(await h.afs.workspaces.volume("demo"), { path: "/x" })).rejects.toThrow();
  });
});

describe("subscriptions/listen on afs serve", () => {
  /** Opens a listen stream; `notes` collects its notifications as they come. */
  async function listen(headers: Record<string, string>, notifications: Record<string, unknown>) {
    const gone = new AbortController();
    const res = await fetch(server.url, {
      method: "POST",
      signal: gone.signal,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "subscriptions/listen",
        params: { notifications, _meta: ENVELOPE },
      }),
    });
    const notes: { method: string; params?: Record<string, unknown> }[] = [];
    if (res.ok && res.body) {
      void (async () => {
        let buffer = "";
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            buffer += Buffer.from(chunk).toString("utf8");
            let end = buffer.indexOf("\n\n");
            while (end >= 0) {
              const data = buffer
                .slice(0, end)
                .split("\n")
                .filter((l) => l.startsWith("data:"))
                .map((l) => l.slice(5).trim())
                .join("\n");
              if (data) notes.push(JSON.parse(data));
              buffer = buffer.slice(end + 2);
              end = buffer.indexOf("\n\n");
            }
          }
        } catch {
          // aborted
        }
      })();
    }
    return { res, notes, close: () => gone.abort() };
  }

  const until = async (check: () => boolean, ms = 3000): Promise<number> => {
    const start = Date.now();
    while (!check()) {
      if (Date.now() - start > ms) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now() - start;
  };

  it("a write from another process reaches a listening client (tens of ms; at most the follower poll); list changes too", async () => {
    const auth = { Authorization: `Bearer ${issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]).secret}` };
    const uri = "afs://demo/readme.md";
    const stream = await listen(auth, { resourceSubscriptions: [uri], resourcesListChanged: true });
    try {
      expect(stream.res.status).toBe(200);
      await until(() => stream.notes.some((n) => n.method === "notifications/subscriptions/acknowledged"));
      const written = h.run(["fs", "write", "/readme.md", "-w", "demo", "--content", "# changed\n"]);
      expect(written.status).toBe(0);
      const ms = await until(() =>
        stream.notes.some((n) => n.method === "notifications/resources/updated" && n.params?.uri === uri),
      );
      // Usually tens of ms. A SQLite follower woken by the WAL write reads again shortly after (the
      // commit shows a moment later); once it waited for the 1 s safety poll (1,011 ms in CI under
      // load). The bound leaves a loaded machine slack beyond the promised second.
      expect(ms).toBeLessThan(2000);
      expect(h.run(["fs", "write", "/new.txt", "-w", "demo", "--content", "new\n"]).status).toBe(0);
      await until(() => stream.notes.some((n) => n.method === "notifications/resources/list_changed"));
    } finally {
      stream.close();
    }
  });

  it("tells a stream of list changes in its own workspace only", async () => {
    const auth = { Authorization: `Bearer ${issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]).secret}` };
    const stream = await listen(auth, { resourcesListChanged: true });
    const listChanged = () => stream.notes.filter((n) => n.method === "notifications/resources/list_changed").length;
    try {
      await until(() => stream.notes.some((n) => n.method === "notifications/subscriptions/acknowledged"));
      // A new file in another workspace: nothing, even after the follower's 1 s safety poll.
      expect(h.run(["fs", "write", "/elsewhere.txt", "-w", "other", "--content", "x\n"]).status).toBe(0);
      await new Promise((r) => setTimeout(r, 1500));
      expect(listChanged()).toBe(0);
      expect(h.run(["fs", "write", "/here.txt", "-w", "demo", "--content", "x\n"]).status).toBe(0);
      await until(() => listChanged() === 1);
    } finally {
      stream.close();
    }
  });

  it("refuses to watch another workspace's files with a workspace token (403 before anything runs)", async () => {
    const auth = { Authorization: `Bearer ${issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]).secret}` };
    const stream = await listen(auth, { resourceSubscriptions: ["afs://other/readme.md"] });
    expect(stream.res.status).toBe(403);
    stream.close();
  });
});
