// The ACP client filesystem in one process: afs's AcpClient on one end of an in-memory stream, an
// agent built with the official SDK's agent side on the other, calling fs/* as a real agent would.
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ApprovalMode, type ApprovalRequest, Approvals } from "../../src/access/approvals.js";
import { resolveLimits } from "../../src/access/limits.js";
import { AcpClient } from "../../src/protocols/acp/client.js";
import { AcpFiles } from "../../src/protocols/acp/files.js";
import { tempDir } from "../helpers/tmp.js";

/** Two linked in-memory streams: what one side writes, the other reads. */
function linkedStreams(): { client: acp.Stream; agent: acp.Stream } {
  const toAgent = new TransformStream<acp.AnyMessage, acp.AnyMessage>();
  const toClient = new TransformStream<acp.AnyMessage, acp.AnyMessage>();
  return {
    client: { writable: toAgent.writable, readable: toClient.readable },
    agent: { writable: toClient.writable, readable: toAgent.readable },
  };
}

interface Harness {
  dir: string;
  outside: string;
  files: AcpFiles;
  client: AcpClient;
  agent: acp.AgentContext;
  session: string;
  asked: ApprovalRequest[];
  bufferWrites: [string, string][];
  updates: acp.SessionNotification[];
  /** The read the agent sent right after answering session/new. */
  early: { result: Promise<{ content: string }> | null };
  /** What the agent's prompt handler does with its client context. */
  turn: { script: (ctx: acp.AgentContext, sessionId: string) => Promise<void> };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function harness(
  mode: ApprovalMode = "allow",
  options: { ask?: boolean; maxTextFileBytes?: number } = {},
): Promise<Harness> {
  const a = await tempDir("afs-acp-dir-");
  const b = await tempDir("afs-acp-outside-");
  cleanups.push(a.cleanup, b.cleanup);
  const asked: ApprovalRequest[] = [];
  const bufferWrites: [string, string][] = [];
  const updates: acp.SessionNotification[] = [];
  const approvals = new Approvals(mode, {
    ask: async (request) => {
      asked.push(request);
      return options.ask ?? false;
    },
  });
  const files = new AcpFiles({
    limits: resolveLimits(options.maxTextFileBytes ? { maxTextFileBytes: options.maxTextFileBytes } : {}, {}),
    approvals,
    agentName: () => "test-agent",
    onBufferWrite: (path, text) => bufferWrites.push([path, text]),
  });
  const turn: Harness["turn"] = { script: async () => {} };
  const early: Harness["early"] = { result: null };
  const streams = linkedStreams();
  const agentConnection = acp
    .agent({ name: "test-agent" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => ({
      protocolVersion: 1,
      agentCapabilities: {},
      agentInfo: { name: "test-agent", version: "1.0" },
      _meta: { clientCapabilities: params.clientCapabilities },
    }))
    .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
      // An agent may call the moment it has answered, before its answer is handled on the other side.
      setImmediate(() => {
        early.result = client.request(acp.methods.client.fs.readTextFile, {
          sessionId: "s-1",
          path: join(params.cwd, "early.txt"),
        });
      });
      return { sessionId: "s-1" };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      await turn.script(client, params.sessionId);
      return { stopReason: "end_turn" };
    })
    .connect(streams.agent);
  const client = AcpClient.connect(streams.client, {
    files,
    approvals,
    onUpdate: (n) => updates.push(n),
  });
  cleanups.push(async () => {
    client.close();
    agentConnection.close();
  });
  const init = await client.initialize();
  // Only what is really served: both fs methods, no terminal.
  expect(init._meta?.clientCapabilities).toMatchObject({ fs: { readTextFile: true, writeTextFile: true } });
  expect(((init._meta?.clientCapabilities ?? {}) as acp.ClientCapabilities).terminal ?? false).toBe(false);
  const session = await client.newSession({ cwd: a.dir });
  return {
    dir: a.dir,
    outside: b.dir,
    files,
    client,
    agent: agentConnection.client,
    session,
    asked,
    bufferWrites,
    updates,
    turn,
    early,
  };
}

/** The JSON-RPC error a request fails with. */
async function rpcError(
  p: Promise<unknown>,
): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code: number; message: string; data?: Record<string, unknown> };
  }
  throw new Error("expected the request to fail, but it succeeded");
}

describe("ACP fs/read_text_file", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  const read = (path: string, extra: { line?: number; limit?: number } = {}) =>
    h.agent.request(acp.methods.client.fs.readTextFile, { sessionId: h.session, path, ...extra });

  it("reads whole files and windows of lines with their own endings", async () => {
    await writeFile(join(h.dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\nfour");
    await writeFile(join(h.dir, "bom.txt"), "\uFEFFfirst\nsecond\n");
    expect(await read(join(h.dir, "crlf.txt"))).toEqual({ content: "one\r\ntwo\r\nthree\r\nfour" });
    expect(await read(join(h.dir, "crlf.txt"), { line: 2, limit: 2 })).toEqual({ content: "two\r\nthree\r\n" });
    expect(await read(join(h.dir, "crlf.txt"), { line: 0, limit: 1 })).toEqual({ content: "one\r\n" });
    expect(await read(join(h.dir, "crlf.txt"), { line: 3, limit: 10 })).toEqual({ content: "three\r\nfour" });
    expect(await read(join(h.dir, "crlf.txt"), { line: 5 })).toEqual({ content: "" });
    expect(await read(join(h.dir, "crlf.txt"), { limit: 0 })).toEqual({ content: "" });
    expect(await read(join(h.dir, "bom.txt"), { line: 1, limit: 1 })).toEqual({ content: "first\n" });
    // Either spelling of a path inside the directory works; "." and ".." that stay inside resolve.
    expect(await read(`${h.dir}/sub/../crlf.txt`, { line: 4 })).toEqual({ content: "four" });
  });

  it("serves a request the agent sends right after answering session/new", async () => {
    for (let i = 0; i < 100 && !h.early.result; i++) await new Promise((r) => setTimeout(r, 5));
    await expect(h.early.result).resolves.toEqual({ content: "" });
  });

  it("answers empty content for a file that does not exist inside the directory", async () => {
    expect(await read(join(h.dir, "new", "file.txt"))).toEqual({ content: "" });
  });

  it("refuses what is not a text file inside the session, naming the path", async () => {
    await writeFile(join(h.outside, "secret.txt"), "TOP SECRET\n");
    await symlink(join(h.outside, "secret.txt"), join(h.dir, "link.txt"));
    await symlink(h.outside, join(h.dir, "linkdir"));
    await mkdir(join(h.dir, "adir"));
    await writeFile(join(h.dir, "bin.dat"), Buffer.from([0x50, 0x4b, 0x00, 0x01]));
    await writeFile(join(h.dir, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    const cases: [string, number, string][] = [
      ["relative/path.txt", -32602, "INVALID_PATH"],
      [join(h.outside, "secret.txt"), -32602, "PERMISSION_DENIED"],
      [`${h.dir}/../${h.outside.split("/").pop()}/secret.txt`, -32602, "PERMISSION_DENIED"],
      [`${h.dir}-evil/x.txt`, -32602, "PERMISSION_DENIED"],
      [join(h.dir, "link.txt"), -32602, "PERMISSION_DENIED"],
      [join(h.dir, "linkdir", "secret.txt"), -32602, "PERMISSION_DENIED"],
      [join(h.dir, "linkdir", "missing.txt"), -32602, "PERMISSION_DENIED"],
      [join(h.dir, "a\0b.txt"), -32602, "INVALID_PATH"],
      [join(h.dir, "adir"), -32602, "INVALID_ARGUMENT"],
      [join(h.dir, "bin.dat"), -32602, "INVALID_ARGUMENT"],
      [join(h.dir, "latin1.txt"), -32602, "INVALID_ARGUMENT"],
    ];
    for (const [path, code, afsCode] of cases) {
      const e = await rpcError(read(path));
      expect({ path, code: e.code, afs: e.data?.code }).toEqual({ path, code, afs: afsCode });
      expect(e.message).not.toContain("TOP SECRET");
      expect(JSON.stringify(e.data)).not.toContain("TOP SECRET");
    }
    expect((await rpcError(read(join(h.dir, "adir")))).message).toContain("directory");
    expect((await rpcError(read(join(h.dir, "bin.dat")))).message).toContain("binary");
    expect((await rpcError(read(join(h.outside, "secret.txt")))).data?.path).toBe(join(h.outside, "secret.txt"));
    const unknown = await rpcError(
      h.agent.request(acp.methods.client.fs.readTextFile, { sessionId: "nope", path: join(h.dir, "x") }),
    );
    expect([unknown.code, unknown.message]).toEqual([-32602, expect.stringContaining("unknown session")]);
  });

  it("refuses a file over the size cap, saying so", async () => {
    const small = await harness("allow", { maxTextFileBytes: 1024 });
    await writeFile(join(small.dir, "big.txt"), "x".repeat(2048));
    const e = await rpcError(
      small.agent.request(acp.methods.client.fs.readTextFile, {
        sessionId: small.session,
        path: join(small.dir, "big.txt"),
      }),
    );
    expect([e.code, e.data?.code, e.data?.size, e.data?.limit]).toEqual([-32602, "QUOTA_EXCEEDED", 2048, 1024]);
    expect(e.message).toContain("AFS_MAX_TEXT_FILE_BYTES");
    // The cap bounds one answer: a window of a file over it is served.
    await writeFile(join(small.dir, "long.txt"), "line\n".repeat(1000));
    expect(
      await small.agent.request(acp.methods.client.fs.readTextFile, {
        sessionId: small.session,
        path: join(small.dir, "long.txt"),
        line: 500,
        limit: 2,
      }),
    ).toEqual({ content: "line\nline\n" });
  });
});

describe("ACP fs/write_text_file", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  const write = (path: string, content: string) =>
    h.agent.request(acp.methods.client.fs.writeTextFile, { sessionId: h.session, path, content });

  it("creates files and parents, keeps CRLF and BOM, and answers {}", async () => {
    expect(await write(join(h.dir, "deep", "new.txt"), "a\nb\n")).toEqual({});
    expect(await readFile(join(h.dir, "deep", "new.txt"), "utf8")).toBe("a\nb\n");
    await writeFile(join(h.dir, "win.txt"), "\uFEFFx\r\ny\r\n");
    await write(join(h.dir, "win.txt"), "x\ny\nz\n");
    expect(await readFile(join(h.dir, "win.txt"), "utf8")).toBe("\uFEFFx\r\ny\r\nz\r\n");
    // A new file takes the text exactly as given, CRLF included.
    await write(join(h.dir, "given.txt"), "p\r\nq\r\n");
    expect(await readFile(join(h.dir, "given.txt"), "utf8")).toBe("p\r\nq\r\n");
  });

  it("refuses writes outside the directory before touching the disk", async () => {
    await symlink(h.outside, join(h.dir, "linkdir"));
    await writeFile(join(h.outside, "target.txt"), "keep\n");
    await symlink(join(h.outside, "target.txt"), join(h.dir, "link.txt"));
    for (const path of [
      join(h.outside, "x.txt"),
      join(h.dir, "linkdir", "x.txt"),
      join(h.dir, "linkdir", "deeper", "x.txt"),
      join(h.dir, "link.txt"),
      `${h.dir}/../x.txt`,
    ]) {
      const e = await rpcError(write(path, "pwned\n"));
      expect({ path, code: e.code, afs: e.data?.code }).toEqual({ path, code: -32602, afs: "PERMISSION_DENIED" });
    }
    expect(await readFile(join(h.outside, "target.txt"), "utf8")).toBe("keep\n");
    const { readdir } = await import("node:fs/promises");
    expect((await readdir(h.outside)).sort()).toEqual(["target.txt"]);
  });

  it("never shows a torn file: 8 writes race 24 reads of one file", async () => {
    const path = join(h.dir, "race.txt");
    const versions = Array.from({ length: 8 }, (_, i) => `${String(i).repeat(64 * 1024)}\n`);
    await write(path, versions[0] as string);
    const reads = Array.from({ length: 24 }, () =>
      h.agent.request(acp.methods.client.fs.readTextFile, { sessionId: h.session, path }),
    );
    const writes = versions.map((v) => write(path, v));
    const [seen] = await Promise.all([Promise.all(reads), Promise.all(writes)]);
    for (const { content } of seen) expect(versions).toContain(content);
    expect(versions).toContain(await readFile(path, "utf8"));
  });

  it("records every write with the session, agent and tool call, and diffs the session's changes", async () => {
    await writeFile(join(h.dir, "a.txt"), "one\ntwo\n");
    h.turn.script = async (agent, sessionId) => {
      await agent.notify(acp.methods.client.session.update, {
        sessionId,
        update: {
          sessionUpdate: "tool_call",
          toolCallId: "call-7",
          title: "Edit a.txt",
          kind: "edit",
          status: "in_progress",
          locations: [{ path: join(h.dir, "a.txt") }],
        },
      });
      await agent.request(acp.methods.client.fs.writeTextFile, {
        sessionId,
        path: join(h.dir, "a.txt"),
        content: "one\nTWO\n",
      });
      await agent.request(acp.methods.client.fs.writeTextFile, {
        sessionId,
        path: join(h.dir, "b.txt"),
        content: "new\n",
      });
    };
    expect(await h.client.prompt(h.session, "go")).toMatchObject({ stopReason: "end_turn" });
    expect(h.updates.map((u) => u.update.sessionUpdate)).toEqual(["tool_call"]);
    const events = h.files.changes.events();
    expect(events.map((e) => [e.path, e.toolCallId, e.agent, e.target])).toEqual([
      [join(h.dir, "a.txt"), "call-7", "test-agent", "disk"],
      [join(h.dir, "b.txt"), undefined, "test-agent", "disk"],
    ]);
    const changed = await h.files.changedFiles(h.session);
    expect(changed.map((c) => [c.path, c.existed])).toEqual([
      [join(h.dir, "a.txt"), true],
      [join(h.dir, "b.txt"), false],
    ]);
    expect(changed[0]?.patch).toContain("-two\n+TWO");
    expect(changed[1]?.patch).toContain("+new");
  });

  it("lays open editor buffers over the disk", async () => {
    const path = join(h.dir, "open.txt");
    await writeFile(path, "on disk\n");
    h.files.buffers.set(path, "unsaved\nedits\n");
    expect(await h.agent.request(acp.methods.client.fs.readTextFile, { sessionId: h.session, path, line: 2 })).toEqual({
      content: "edits\n",
    });
    await write(path, "from the agent\n");
    expect(h.bufferWrites).toEqual([[path, "from the agent\n"]]);
    expect(await readFile(path, "utf8")).toBe("on disk\n");
    expect(h.files.changes.events().at(-1)?.target).toBe("buffer");
    h.files.buffers.clear(path);
    expect(await h.agent.request(acp.methods.client.fs.readTextFile, { sessionId: h.session, path })).toEqual({
      content: "on disk\n",
    });
  });
});

describe("ACP approvals", () => {
  const permission = (h: Harness, options: acp.PermissionOption[]) =>
    h.agent.request(acp.methods.client.session.requestPermission, {
      sessionId: h.session,
      toolCall: {
        toolCallId: "call-1",
        title: "Write x.txt",
        locations: [{ path: join(h.dir, "x.txt") }],
        content: [{ type: "diff", path: join(h.dir, "x.txt"), oldText: null, newText: "hello\n" }],
      },
      options,
    });
  const OPTIONS: acp.PermissionOption[] = [
    { optionId: "yes", name: "Allow", kind: "allow_once" },
    { optionId: "always", name: "Always", kind: "allow_always" },
    { optionId: "no", name: "Reject", kind: "reject_once" },
  ];

  it("allow picks the allow option; deny picks reject, or cancels when there is none, and refuses writes", async () => {
    const allow = await harness("allow");
    expect(await permission(allow, OPTIONS)).toEqual({ outcome: { outcome: "selected", optionId: "yes" } });
    const deny = await harness("deny");
    expect(await permission(deny, OPTIONS)).toEqual({ outcome: { outcome: "selected", optionId: "no" } });
    expect(await permission(deny, OPTIONS.slice(0, 2))).toEqual({ outcome: { outcome: "cancelled" } });
    await writeFile(join(deny.dir, "x.txt"), "before\n");
    const e = await rpcError(
      deny.agent.request(acp.methods.client.fs.writeTextFile, {
        sessionId: deny.session,
        path: join(deny.dir, "x.txt"),
        content: "after\n",
      }),
    );
    expect([e.code, e.data?.code]).toEqual([-32602, "PERMISSION_DENIED"]);
    expect(await readFile(join(deny.dir, "x.txt"), "utf8")).toBe("before\n");
  });

  it("ask shows the diff to a person, and an approved tool call's write is not asked twice", async () => {
    const refuse = await harness("ask", { ask: false });
    expect(await permission(refuse, OPTIONS)).toEqual({ outcome: { outcome: "selected", optionId: "no" } });
    expect(refuse.asked[0]).toMatchObject({ kind: "permission", title: "Write x.txt" });
    expect(refuse.asked[0]?.diff).toContain("+hello");

    const agree = await harness("ask", { ask: true });
    expect(await permission(agree, OPTIONS)).toEqual({ outcome: { outcome: "selected", optionId: "yes" } });
    const path = join(agree.dir, "x.txt");
    await agree.agent.request(acp.methods.client.fs.writeTextFile, {
      sessionId: agree.session,
      path,
      content: "hello\n",
    });
    expect(agree.asked.map((a) => a.kind)).toEqual(["permission"]);
    // The call was introduced only by the permission request (as Gemini CLI does); the write is its.
    expect(agree.files.changes.events().at(-1)?.toolCallId).toBe("call-1");
    // A second write to the same path was not part of the approved call: it is asked about, with its diff.
    await agree.agent.request(acp.methods.client.fs.writeTextFile, {
      sessionId: agree.session,
      path,
      content: "bye\n",
    });
    expect(agree.asked.map((a) => a.kind)).toEqual(["permission", "write"]);
    expect(agree.asked[1]?.diff).toContain("-hello\n+bye");
    expect(await readFile(path, "utf8")).toBe("bye\n");
  });
});
