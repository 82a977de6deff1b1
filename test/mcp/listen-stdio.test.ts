// 2026-07-28's subscriptions/listen over stdio: a real `afs mcp` child spoken to in raw JSON lines
// (the SDK v2 client has no listen call), a write by another process (`afs fs write`) reaching the
// subscription within a second, list changes, cancellation, and URIs refused before the
// subscription opens.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveLimits } from "../../src/access/limits.js";
import { write } from "../../src/ops/index.js";
import { StdioListens } from "../../src/protocols/mcp/stdio-listen.js";
import { MAIN } from "../cli/run.js";
import { ensureBuilt, type Home, home } from "./session.js";

const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
};
const SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId";

interface Message {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown> & { uri?: string; _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  /** When this process read it (Date.now()). */
  at: number;
}

let h: Home;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  for (const ws of ["demo", "other"]) {
    await h.afs.workspaces.create(ws);
    await write(await h.afs.workspaces.volume(ws), { path: "/readme.md", content: `# ${ws}\n` });
  }
});
afterAll(async () => {
  for (const c of children) c.kill();
  await h?.cleanup();
});

/** `afs mcp` with these arguments; `seen` collects every message it writes. */
function mcp(args: readonly string[]) {
  const child = spawn(process.execPath, [MAIN, "mcp", ...args], { env: h.env });
  children.push(child);
  const seen: Message[] = [];
  let buffer = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    let end = buffer.indexOf("\n");
    while (end >= 0) {
      const line = buffer.slice(0, end).trim();
      if (line) seen.push({ ...JSON.parse(line), at: Date.now() });
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf("\n");
    }
  });
  const send = (message: Record<string, unknown>) =>
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
  const request = (id: number, method: string, params: Record<string, unknown> = {}) =>
    send({ id, method, params: { ...params, _meta: ENVELOPE } });
  return { seen, send, request };
}

/** Waits for a message `check` accepts; how long it took. */
async function until(seen: Message[], check: (m: Message) => boolean, ms = 5000): Promise<number> {
  const start = Date.now();
  while (!seen.some(check)) {
    if (Date.now() - start > ms) throw new Error(`timed out; seen: ${JSON.stringify(seen)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

const updated = (id: number, uri: string) => (m: Message) =>
  m.method === "notifications/resources/updated" && m.params?.uri === uri && m.params?._meta?.[SUBSCRIPTION] === id;
const listChanged = (id: number) => (m: Message) =>
  m.method === "notifications/resources/list_changed" && m.params?._meta?.[SUBSCRIPTION] === id;
const acknowledged = (id: number) => (m: Message) =>
  m.method === "notifications/subscriptions/acknowledged" && m.params?._meta?.[SUBSCRIPTION] === id;

describe("subscriptions/listen on afs mcp", () => {
  it("declares subscriptions, and a write from another process reaches the listener within a second", async () => {
    const s = mcp(["-w", "demo", "--profile", "workspace-ro"]);
    s.request(1, "server/discover");
    await until(s.seen, (m) => m.id === 1);
    const discovered = s.seen.find((m) => m.id === 1)?.result as { capabilities?: { resources?: unknown } };
    expect(discovered.capabilities?.resources).toEqual({ subscribe: true, listChanged: true });

    const uri = "afs://demo/readme.md";
    s.request(2, "subscriptions/listen", {
      notifications: { resourceSubscriptions: [uri], resourcesListChanged: true },
    });
    await until(s.seen, acknowledged(2));
    // The acknowledgement names what the server will deliver: both, since both are declared.
    expect(s.seen.find(acknowledged(2))?.params?.notifications).toEqual({
      resourceSubscriptions: [uri],
      resourcesListChanged: true,
    });

    expect(h.run(["fs", "write", "/readme.md", "-w", "demo", "--content", "# changed\n"]).status).toBe(0);
    await until(s.seen, updated(2, uri), 1000);
    // From the commit (the event's time, same clock) to the notification reaching this client.
    const [event] = await h.afs.events.recent("demo", { limit: 1, path: "/readme.md" });
    const latency = (s.seen.find(updated(2, uri))?.at ?? 0) - (event?.time ?? 0);
    process.stderr.write(`listen-stdio: notifications/resources/updated ${latency} ms after the commit\n`);
    expect(latency).toBeLessThan(1000);
    expect(h.run(["fs", "write", "/new.txt", "-w", "demo", "--content", "new\n"]).status).toBe(0);
    await until(s.seen, listChanged(2));
    // Another workspace's files come and go without a word to this listener.
    expect(h.run(["fs", "write", "/new.txt", "-w", "other", "--content", "new\n"]).status).toBe(0);

    // A second listen for the same file; cancelling the first leaves the second hearing of it.
    s.request(3, "subscriptions/listen", { notifications: { resourceSubscriptions: [uri] } });
    await until(s.seen, acknowledged(3));
    s.send({ method: "notifications/cancelled", params: { requestId: 2 } });
    const before = s.seen.filter(updated(2, uri)).length;
    expect(h.run(["fs", "write", "/readme.md", "-w", "demo", "--content", "# again\n"]).status).toBe(0);
    await until(s.seen, updated(3, uri));
    expect(s.seen.filter(updated(2, uri)).length).toBe(before);
    expect(s.seen.filter(listChanged(2)).length).toBe(1);
  });

  it("refuses a URI it could not read before the subscription opens, and keeps serving", async () => {
    // afs mcp is unpinned (the user's own process, as for tools' workspace argument), so the
    // refusals are those of a read: no such workspace, no such checkpoint, a malformed URI.
    const s = mcp(["-w", "demo", "--profile", "workspace-ro"]);
    s.request(1, "server/discover");
    await until(s.seen, (m) => m.id === 1);
    const refusals: [number, string, string][] = [
      [2, "afs://nope/readme.md", "NOT_FOUND"],
      [3, "afs://demo@nope/readme.md", "NOT_FOUND"],
      [4, "afs://demo/../x", "INVALID_PATH"],
    ];
    for (const [id, uri, code] of refusals) {
      s.request(id, "subscriptions/listen", {
        notifications: { resourceSubscriptions: ["afs://demo/readme.md", uri] },
      });
      await until(s.seen, (m) => m.id === id);
      const reply = s.seen.find((m) => m.id === id);
      expect(reply?.error?.data?.code).toBe(code);
      expect(reply?.error?.message).toContain(code);
      expect(s.seen.some(acknowledged(id))).toBe(false);
    }

    // The refused listens watch nothing; an accepted one after them (another workspace: unpinned) does.
    s.request(5, "subscriptions/listen", { notifications: { resourceSubscriptions: ["afs://other/readme.md"] } });
    await until(s.seen, acknowledged(5));
    expect(h.run(["fs", "write", "/readme.md", "-w", "demo", "--content", "# demo\n"]).status).toBe(0);
    expect(h.run(["fs", "write", "/readme.md", "-w", "other", "--content", "# other\n"]).status).toBe(0);
    await until(s.seen, updated(5, "afs://other/readme.md"));
    expect(
      s.seen.some((m) => m.method === "notifications/resources/updated" && m.params?.uri === "afs://demo/readme.md"),
    ).toBe(false);
  });

  it("checks each URI as a read: a session pinned to a workspace may not watch another's", async () => {
    // afs mcp's own sessions are unpinned; the check is the read's (resources/context.ts authorize).
    const listens = new StdioListens({
      afs: h.afs,
      profile: "workspace-ro",
      limits: resolveLimits({}, h.afs.settings.env),
      workspace: "demo",
      pinned: true,
    });
    try {
      const listen = (id: number, uri: string) =>
        listens.admit({
          jsonrpc: "2.0",
          id,
          method: "subscriptions/listen",
          params: { notifications: { resourceSubscriptions: [uri] }, _meta: ENVELOPE },
        });
      expect(await listen(1, "afs://demo/readme.md")).toBeNull();
      expect(await listen(2, "afs://other/readme.md")).toMatchObject({
        id: 2,
        error: { data: { code: "PERMISSION_DENIED" }, message: expect.stringContaining("afs://demo/PATH") },
      });
    } finally {
      listens.close();
    }
  });
});
