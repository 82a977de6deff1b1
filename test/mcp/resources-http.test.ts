// Resources over `afs serve` (stateless HTTP, 2025-11-25, the SDK v1 client): the token matrix (a
// workspace token lists and reads only its workspace, no token is a 401, an unbound admin token
// lists the current workspace and reads any), and subscriptions pointed at a transport that streams.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { connectHttp, issue, post, type Served, serve } from "./serve.js";
import { ensureBuilt, type Home, home } from "./session.js";

let h: Home;
let server: Served;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  for (const ws of ["alpha", "beta"]) {
    await h.afs.workspaces.create(ws);
    await write(await h.afs.workspaces.volume(ws), { path: `/${ws}.txt`, content: `${ws}\n` });
  }
  await h.afs.workspaces.use("beta");
  server = await serve(h);
});
afterAll(async () => {
  await server?.stop();
  await h?.cleanup();
});

async function rpcFailure(p: Promise<unknown>): Promise<{ code: number; afs: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof McpError)) throw e;
    return { code: e.code, afs: (e.data as { code?: string } | undefined)?.code ?? "", message: e.message };
  }
  throw new Error("the request succeeded; expected an error");
}

const listRequest = { jsonrpc: "2.0", id: 1, method: "resources/list", params: {} };

describe("the token matrix for resources", () => {
  it("no token, or a bad one: 401 before anything is listed", async () => {
    const none = await post(server.url, listRequest);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/resource_metadata=/);
    const bad = await post(server.url, listRequest, { Authorization: "Bearer afs_nonsense" });
    expect(bad.status).toBe(401);
  });

  for (const profile of ["workspace-ro", "workspace-rw", "workspace-rw-checkpoint"]) {
    it(`${profile} token for alpha: lists and reads alpha only`, async () => {
      const { secret } = issue(h, ["--workspace", "alpha", "--profile", profile]);
      const s = await connectHttp(server.url, secret);
      const { resources } = await s.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["afs://alpha/alpha.txt"]);
      expect((await s.client.readResource({ uri: "afs://alpha/alpha.txt" })).contents[0]).toMatchObject({
        text: "alpha\n",
      });
      for (const uri of ["afs://beta/beta.txt", "afs://beta@any/beta.txt", "afs://beta/missing.txt"]) {
        const f = await rpcFailure(s.client.readResource({ uri }));
        expect(f, uri).toMatchObject({ code: -32602, afs: "PERMISSION_DENIED" });
        expect(f.message).toMatch(/may only use workspace alpha/);
      }
      await s.close();
    });
  }

  for (const profile of ["admin-ro", "admin-rw"]) {
    it(`${profile} control-plane token (no workspace): lists the current workspace, reads any`, async () => {
      const { secret } = issue(h, ["--control-plane", "--profile", profile]);
      const s = await connectHttp(server.url, secret);
      expect((await s.client.listResources()).resources.map((r) => r.uri)).toEqual(["afs://beta/beta.txt"]);
      expect((await s.client.readResource({ uri: "afs://alpha/alpha.txt" })).contents[0]).toMatchObject({
        text: "alpha\n",
      });
      await s.close();
    });
  }

  it("a revoked token is refused on the next request", async () => {
    const { id, secret } = issue(h, ["--workspace", "alpha", "--profile", "workspace-ro"]);
    expect((await post(server.url, listRequest, { Authorization: `Bearer ${secret}` })).status).toBe(200);
    expect(h.run(["token", "revoke", id]).status).toBe(0);
    expect((await post(server.url, listRequest, { Authorization: `Bearer ${secret}` })).status).toBe(401);
  });
});

describe("subscriptions over stateless HTTP", () => {
  it("advertises resources without subscribe, and says where subscriptions work", async () => {
    const { secret } = issue(h, ["--workspace", "alpha"]);
    const s = await connectHttp(server.url, secret);
    expect(s.client.getServerCapabilities()?.resources).toEqual({});
    const reply = await post(
      server.url,
      { jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "afs://alpha/alpha.txt" } },
      { Authorization: `Bearer ${secret}` },
    );
    expect(reply.body).toMatchObject({ error: { code: -32601 } });
    expect(JSON.stringify(reply.body)).toMatch(/afs mcp.*subscriptions\/listen/);
    await s.close();
  });
});
