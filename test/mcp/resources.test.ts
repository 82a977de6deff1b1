// Workspace files as MCP resources over stdio (the built `afs mcp`, the SDK v1 client, 2025-11-25):
// templates, paginated lists, text and binary reads with their sha256, checkpoint URIs, the errors
// a client's URI can cause, and change notifications for writes made by another process.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { MAIN } from "../cli/run.js";
import { ensureBuilt, type Home, home, type Session } from "./session.js";

const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");
const FILES = 250;
// A PNG's signature and a NUL: binary by any test.
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 255, 254]);

let h: Home;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  await h.afs.workspaces.create("demo");
  await h.afs.workspaces.create("other");
  const demo = await h.afs.workspaces.volume("demo");
  for (let i = 0; i < FILES; i++) {
    await write(demo, { path: `/many/f${String(i).padStart(3, "0")}.txt`, content: `file ${i}\n` });
  }
  await write(demo, { path: "/a.md", content: "# first\n" });
  await demo.writeFile("/img/logo.png", PNG, { op: "write" });
  await write(demo, { path: "/dir with space/ünï #1.txt", content: "spaced\n" });
  await h.afs.checkpoints.create("demo", { name: "v1" });
  await write(demo, { path: "/a.md", content: "# second\n" });
  await write(await h.afs.workspaces.volume("other"), { path: "/secret.txt", content: "other's\n" });
});
afterAll(() => h?.cleanup());

/** The JSON-RPC error a request failed with. */
async function rpcFailure(p: Promise<unknown>): Promise<{ code: number; afs: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof McpError)) throw e;
    return { code: e.code, afs: (e.data as { code: string }).code, message: e.message };
  }
  throw new Error("the request succeeded; expected an error");
}

/** `afs fs write` in a process of its own, resolving when it has exited. */
function writeFromCli(path: string, content: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, "fs", "write", "-w", "demo", path, "--content", content], {
      env: h.env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`afs fs write exited ${code}: ${stderr}`)),
    );
  });
}

describe("resources over stdio", () => {
  let s: Session;
  beforeAll(async () => {
    s = await h.connect(["mcp", "--workspace", "demo"]);
  });

  it("advertises subscribable resources and the two URI templates", async () => {
    expect(s.client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
    const { resourceTemplates } = await s.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      "afs://{workspace}/{+path}",
      "afs://{workspace}@{checkpoint}/{+path}",
    ]);
  });

  it("lists every file of the workspace once, in path order, a page at a time", async () => {
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await s.client.listResources(cursor === undefined ? {} : { cursor });
      expect(page.resources.length).toBeLessThanOrEqual(100);
      for (const r of page.resources) {
        expect(r.uri.startsWith("afs://demo/")).toBe(true);
        expect(typeof r.size).toBe("number");
      }
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(uris).toHaveLength(FILES + 3);
    expect(new Set(uris).size).toBe(uris.length);
    expect(uris).toContain("afs://demo/dir%20with%20space/%C3%BCn%C3%AF%20%231.txt");
    const first = (await s.client.listResources()).resources[0];
    expect(first).toMatchObject({ uri: "afs://demo/a.md", name: "a.md", title: "/a.md", mimeType: "text/markdown" });
    expect(first?._meta).toEqual({ "afs/sha256": sha256("# second\n") });
  });

  it("refuses a cursor it did not hand out", async () => {
    const f = await rpcFailure(s.client.listResources({ cursor: "not-a-cursor" }));
    expect(f).toMatchObject({ code: -32602, afs: "INVALID_ARGUMENT" });
  });

  it("reads text with its type, size and sha256", async () => {
    const { contents } = await s.client.readResource({ uri: "afs://demo/a.md" });
    expect(contents).toEqual([
      {
        uri: "afs://demo/a.md",
        mimeType: "text/markdown",
        text: "# second\n",
        _meta: { "afs/sha256": sha256("# second\n"), "afs/size": 9 },
      },
    ]);
    const spaced = await s.client.readResource({ uri: "afs://demo/dir%20with%20space/%C3%BCn%C3%AF%20%231.txt" });
    expect(spaced.contents[0]).toMatchObject({ text: "spaced\n", mimeType: "text/plain" });
  });

  it("reads binary as a base64 blob whose sha256 matches", async () => {
    const [c] = (await s.client.readResource({ uri: "afs://demo/img/logo.png" })).contents;
    expect(c).toMatchObject({ mimeType: "image/png", _meta: { "afs/sha256": sha256(PNG), "afs/size": PNG.length } });
    const blob = Buffer.from((c as { blob: string }).blob, "base64");
    expect(blob.equals(PNG)).toBe(true);
    expect(sha256(blob)).toBe(c?._meta?.["afs/sha256"]);
  });

  it("reads a file as a checkpoint holds it, unchanged by later writes", async () => {
    const [c] = (await s.client.readResource({ uri: "afs://demo@v1/a.md" })).contents;
    expect(c).toMatchObject({
      text: "# first\n",
      _meta: { "afs/sha256": sha256("# first\n"), "afs/checkpoint": "v1" },
    });
    // The checkpoint's URI is read-only: subscribing is allowed and never fires; nothing writes through it.
    await s.client.subscribeResource({ uri: "afs://demo@v1/a.md" });
    await s.client.unsubscribeResource({ uri: "afs://demo@v1/a.md" });
  });

  it("answers a missing file, checkpoint or workspace with -32602 and the afs code", async () => {
    for (const [uri, afs] of [
      ["afs://demo/nope.txt", "NOT_FOUND"],
      ["afs://demo@nope/a.md", "NOT_FOUND"],
      ["afs://demo@v1/new-since.txt", "NOT_FOUND"],
      ["afs://ghost/a.md", "NOT_FOUND"],
      ["afs://demo/many", "INVALID_ARGUMENT"],
      ["afs://demo/a/%2E%2E/%2E%2E/etc/passwd", "INVALID_PATH"],
      ["afs://demo/..%2F..%2Fetc%2Fpasswd", "INVALID_PATH"],
      ["afs://demo/a%zz", "INVALID_ARGUMENT"],
      ["file:///etc/passwd", "INVALID_ARGUMENT"],
    ] as const) {
      const f = await rpcFailure(s.client.readResource({ uri }));
      expect(f, uri).toMatchObject({ code: -32602, afs });
    }
    const missing = await rpcFailure(s.client.readResource({ uri: "afs://demo@nope/a.md" }));
    expect(missing.message).toMatch(/checkpoint "nope" does not exist in workspace demo/);
  });

  it("refuses a file over the read limit, pointing at ranged reads", async () => {
    const small = await h.connect(["mcp", "--workspace", "demo"], { env: { AFS_MAX_READ_BYTES: "8" } });
    const f = await rpcFailure(small.client.readResource({ uri: "afs://demo/img/logo.png" }));
    expect(f).toMatchObject({ code: -32602, afs: "QUOTA_EXCEEDED" });
    expect(f.message).toMatch(/file_lines/);
    await small.close();
  });

  it("tells a subscriber within a second when another process writes the file", async () => {
    const updates: { uri: string; at: number }[] = [];
    s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push({ uri: n.params.uri, at: Date.now() });
    });
    const uri = "afs://demo/watched.txt";
    await s.client.subscribeResource({ uri }); // the file does not exist yet
    await writeFromCli("/watched.txt", "one\n");
    const exited = Date.now();
    await expect.poll(() => updates.filter((u) => u.uri === uri).length, { timeout: 1000, interval: 10 }).toBe(1);
    // From the commit (the event's time, same clock) to the notification reaching this client.
    const [event] = await h.afs.events.recent("demo", { limit: 1, path: "/watched.txt" });
    const latency = (updates[0]?.at ?? 0) - (event?.time ?? 0);
    process.stderr.write(
      `resources: notifications/resources/updated ${latency} ms after the commit (${(updates[0]?.at ?? 0) - exited} ms after the writer exited)\n`,
    );
    expect(latency).toBeLessThan(1000);
    expect((await s.client.readResource({ uri })).contents[0]).toMatchObject({ text: "one\n" });

    // A write elsewhere says nothing about this file; after unsubscribing, neither does a write to it.
    await writeFromCli("/unrelated.txt", "x\n");
    await s.client.unsubscribeResource({ uri });
    await writeFromCli("/watched.txt", "two\n");
    await new Promise((r) => setTimeout(r, 300));
    expect(updates.map((u) => u.uri)).toEqual([uri]);
  });

  it("tells a client that listed when files come and go", async () => {
    let changed = 0;
    s.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      changed++;
    });
    await s.client.listResources();
    await writeFromCli("/brand-new.txt", "new\n");
    await expect.poll(() => changed, { timeout: 1000, interval: 10 }).toBeGreaterThan(0);
  });
});

describe("profiles over stdio", () => {
  for (const profile of ["workspace-ro", "workspace-rw", "workspace-rw-checkpoint", "admin-ro", "admin-rw"]) {
    it(`${profile}: lists its workspace's files and reads them`, async () => {
      const s = await h.connect(["mcp", "--profile", profile, "--workspace", "other"]);
      const { resources } = await s.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["afs://other/secret.txt"]);
      expect((await s.client.readResource({ uri: "afs://other/secret.txt" })).contents[0]).toMatchObject({
        text: "other's\n",
      });
      await s.close();
    });
  }
});
