// The hosted control plane over real HTTP (`afs serve`, the SDK client, a control-plane token):
// the reference's argument shapes beside afs's own, templates, workspaces by name or id, and
// error messages that name MCP tools (over stdio too), never CLI commands.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { connectHttp, issue, post, type Served, serve, toolCall } from "./serve.js";
import { ensureBuilt, type Home, home, type Session } from "./session.js";

interface WorkspaceResult {
  workspace: string;
  name: string;
  id: string;
  description: string;
  head: string;
  head_checkpoint_id: string;
  template: string | null;
  template_slug?: string;
  source?: string;
  created?: boolean;
  current?: boolean;
}

let h: Home;
let server: Served;
let admin: Session;
let adminSecret: string;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  await h.afs.workspaces.create("base");
  const volume = await h.afs.workspaces.volume("base");
  await write(volume, { path: "/app.txt", content: "checkpointed\n" });
  await h.afs.checkpoints.create("base", { name: "v1" });
  await write(volume, { path: "/app.txt", content: "live only\n" });
  await h.afs.workspaces.setTemplate("base", "starter");
  await h.afs.workspaces.create("other");
  // Offered as a template before anything in it was checkpointed.
  await h.afs.workspaces.create("fresh");
  await write(await h.afs.workspaces.volume("fresh"), { path: "/seed.txt", content: "never checkpointed\n" });
  await h.afs.workspaces.setTemplate("fresh", "fresh-start");
  server = await serve(h);
  adminSecret = issue(h, ["--control-plane", "--profile", "admin-rw"]).secret;
  admin = await connectHttp(server.url, adminSecret);
});
afterAll(async () => {
  await admin?.close();
  await server?.stop();
  await h?.cleanup();
});

describe("hosted argument shapes", () => {
  it("one schema per tool names both forms and says which is which", () => {
    const schema = (name: string) => admin.tools.find((t) => t.name === name)?.inputSchema;
    const create = schema("workspace_create");
    expect(Object.keys(create?.properties ?? {}).sort()).toEqual(
      ["description", "name", "set_current", "template_slug", "workspace"].sort(),
    );
    const props = create?.properties as Record<string, { description?: string }>;
    expect(props.workspace?.description).toContain("local form");
    expect(props.name?.description).toContain("hosted form");
    const fork = schema("workspace_fork")?.properties as Record<string, { description?: string }>;
    expect(Object.keys(fork).sort()).toEqual(["checkpoint", "name", "new_workspace", "source", "workspace"]);
    expect(fork.source?.description).toContain("hosted form");
    const get = schema("workspace_get")?.properties as Record<string, { description?: string }>;
    expect(get.workspace?.description).toBe("Workspace name or id.");
  });

  it("workspace_create takes {name, description} as well as {workspace}", async () => {
    const hosted = await admin.ok<WorkspaceResult>("workspace_create", { name: "h-one", description: "hosted" });
    expect(hosted).toMatchObject({ workspace: "h-one", name: "h-one", description: "hosted", head: "initial" });
    expect(hosted.id).toMatch(/^ws_[0-9a-f]{20}$/);
    expect(hosted.template_slug).toBeUndefined();
    expect(await admin.ok("workspace_create", { workspace: "h-two" })).toMatchObject({ workspace: "h-two" });
    // Both forms together are fine when they agree.
    expect(await admin.ok("workspace_create", { workspace: "h-three", name: "h-three" })).toMatchObject({
      name: "h-three",
    });
  });

  it("refuses a missing name, two different names and unknown keys", async () => {
    const none = await admin.fail("workspace_create", { description: "no name" });
    expect(none.code).toBe("INVALID_ARGUMENT");
    expect(none.message).toContain("workspace: required (or name, the hosted form)");
    expect((await admin.fail("workspace_create", { workspace: "a1", name: "b1" })).code).toBe("INVALID_ARGUMENT");
    expect((await admin.fail("workspace_fork", { source: "base" })).message).toContain("new_workspace: required");
    const bogus = await admin.fail("workspace_create", { name: "x1", bogus: 1 });
    expect(bogus.code).toBe("INVALID_ARGUMENT");
    expect(bogus.message).toContain("bogus");
  });

  it("workspace_fork takes {source, name} as well as {workspace, new_workspace}", async () => {
    const hosted = await admin.ok<WorkspaceResult>("workspace_fork", { source: "base", name: "f-hosted" });
    expect(hosted).toMatchObject({ source: "base", workspace: "f-hosted", name: "f-hosted", created: true });
    const local = await admin.ok<WorkspaceResult>("workspace_fork", { workspace: "base", new_workspace: "f-local" });
    expect(local).toMatchObject({ source: "base", workspace: "f-local", created: true });
    // A fork takes the live state.
    expect((await admin.ok("file_read", { workspace: "f-hosted", path: "/app.txt" })).content).toBe("live only\n");
  });

  it("workspace_get and workspace_delete take a name or an id", async () => {
    const byName = await admin.ok<WorkspaceResult>("workspace_get", { workspace: "base" });
    expect(byName).toMatchObject({ workspace: "base", name: "base", head: "v1", template: "starter" });
    expect(await admin.ok("workspace_get", { workspace: byName.id })).toEqual(byName);

    const doomed = await admin.ok<WorkspaceResult>("workspace_create", { name: "doomed-by-id" });
    expect(await admin.ok("workspace_delete", { workspace: doomed.id })).toEqual({
      workspace: "doomed-by-id",
      deleted: true,
    });
    expect((await admin.fail("workspace_get", { workspace: doomed.id })).code).toBe("NOT_FOUND");
    expect((await admin.fail("workspace_get", { workspace: "doomed-by-id" })).code).toBe("NOT_FOUND");
    // Recreated under the same name, it is a new workspace with a new id.
    const again = await admin.ok<WorkspaceResult>("workspace_create", { name: "doomed-by-id" });
    expect(again.id).not.toBe(doomed.id);
  });
});

describe("templates over MCP", () => {
  it("workspace_list shows each template's slug", async () => {
    const { workspaces } = await admin.ok<{ workspaces: WorkspaceResult[] }>("workspace_list");
    expect(workspaces.find((w) => w.name === "base")?.template).toBe("starter");
    expect(workspaces.find((w) => w.name === "other")?.template).toBeNull();
  });

  it("workspace_create template_slug starts from the template's live state, like a fork", async () => {
    const made = await admin.ok<WorkspaceResult>("workspace_create", {
      name: "from-starter",
      description: "seeded",
      template_slug: "starter",
    });
    expect(made).toMatchObject({ name: "from-starter", template_slug: "starter", head: "fork", description: "seeded" });
    expect((await admin.ok("file_read", { workspace: "from-starter", path: "/app.txt" })).content).toBe("live only\n");
    const { checkpoints } = await admin.ok<{ checkpoints: { name: string; kind: string; description: string }[] }>(
      "checkpoint_list",
      { workspace: "from-starter" },
    );
    expect(checkpoints).toEqual([
      expect.objectContaining({
        name: "fork",
        kind: "fork",
        description: "from template starter (workspace base, live state after checkpoint v1)",
      }),
    ]);
  });

  it("a template whose files were never checkpointed gives them to the new workspace", async () => {
    const made = await admin.ok<WorkspaceResult>("workspace_create", {
      name: "from-fresh",
      template_slug: "fresh-start",
    });
    expect(made).toMatchObject({ name: "from-fresh", template_slug: "fresh-start", head: "fork" });
    expect((await admin.ok("file_read", { workspace: "from-fresh", path: "/seed.txt" })).content).toBe(
      "never checkpointed\n",
    );
  });

  it("an unknown slug is NOT_FOUND pointing at workspace_list", async () => {
    const e = await admin.fail("workspace_create", { name: "nope-ws", template_slug: "nope" });
    expect(e.code).toBe("NOT_FOUND");
    expect(e.message).toBe('template "nope" does not exist; call workspace_list to see the templates and their slugs');
  });
});

describe("messages name MCP tools, not CLI commands", () => {
  it("over HTTP", async () => {
    const ghost = await admin.fail("workspace_get", { workspace: "ghost" });
    expect(ghost).toMatchObject({
      code: "NOT_FOUND",
      message: 'workspace "ghost" does not exist; call workspace_list to see the workspaces',
    });
    expect(ghost.text).toBe('NOT_FOUND: workspace "ghost" does not exist; call workspace_list to see the workspaces');
    const cp = await admin.fail("checkpoint_restore", { workspace: "base", checkpoint: "nope" });
    expect(cp.message).toBe(
      'checkpoint "nope" does not exist in workspace base; call checkpoint_list to see the checkpoints',
    );
    const token = await admin.fail("mcp_token_revoke", { token_id: "ffffffffffffffff" });
    expect(token.message).toBe("token ffffffffffffffff does not exist; call mcp_token_list to see the tokens");
    for (const e of [ghost, cp, token]) expect(`${e.message} ${e.text}`).not.toMatch(/\bafs (ws|cp|token)\b/);

    // A raw JSON-RPC client sees the same.
    const raw = await post(server.url, toolCall("workspace_delete", { workspace: "ghost" }), {
      Authorization: `Bearer ${adminSecret}`,
    });
    expect(JSON.stringify(raw.body)).toContain("call workspace_list");
    expect(JSON.stringify(raw.body)).not.toContain("afs ws");
  });

  it("over stdio, naming only tools the session has", async () => {
    const full = await h.connect(["mcp", "--profile", "admin-rw"]);
    const e = await full.fail("file_read", { workspace: "ghost", path: "/x" });
    expect(e.message).toBe('workspace "ghost" does not exist; call workspace_list to see the workspaces');

    // workspace-rw has no workspace_list: the message is neutral rather than naming a tool it lacks.
    const narrow = await h.connect(["mcp", "--workspace", "base"]);
    expect(narrow.tools.map((t) => t.name)).not.toContain("workspace_list");
    const n = await narrow.fail("file_read", { workspace: "ghost", path: "/x" });
    expect(n.message).toBe('workspace "ghost" does not exist');
  });
});
