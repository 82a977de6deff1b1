// `afs broker` end to end: an official-SDK host Client starts the built CLI, which starts our SDK
// server (fixture-server.ts) as its child. Plain MCP must pass both ways untouched; the server's
// roots/list and files/* (through the BrokeredFiles helper) are answered by afs, with consent,
// confinement, chunking, watch and an audit log; either side going away ends the other.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, MAIN, ROOT } from "../cli/run.js";

const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const SERVER = [process.execPath, "--import", TSX, join(ROOT, "test/broker/fixture-server.ts")];

let base: string;
let proj: string;
let docs: string;
let outside: string;
let env: Record<string, string>;
beforeAll(async () => {
  ensureBuilt();
  base = await mkdtemp(join(tmpdir(), "afs-broker-"));
  proj = join(base, "proj");
  docs = join(base, "docs");
  outside = join(base, "outside");
  for (const d of [join(proj, "sub"), docs, outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(proj, "a.txt"), "alpha\n");
  writeFileSync(join(proj, "sub", "b.txt"), "beta\n");
  writeFileSync(join(docs, "readme.md"), "# docs\n");
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET\n");
  env = { ...(process.env as Record<string, string>), AFS_HOME: join(base, "home") };
  delete env.AFS_STORE;
  delete env.AFS_WORKSPACE;
});
afterAll(() => rm(base, { recursive: true, force: true }));

interface Host {
  client: Client;
  stderr: () => string;
  logs: string[];
  elicitations: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A host Client running `afs broker FLAGS -- fixture-server`, answering elicitation and sampling. */
async function host(
  flags: string[],
  answerElicitation: (params: Record<string, unknown>) => Record<string, unknown> = () => ({ action: "decline" }),
): Promise<Host> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "broker", ...flags, "--", ...SERVER],
    env,
    cwd: base,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client(
    { name: "test-host", version: "1.0.0" },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  const logs: string[] = [];
  const elicitations: Array<Record<string, unknown>> = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
  client.setRequestHandler(ElicitRequestSchema, (r) => {
    elicitations.push(r.params as Record<string, unknown>);
    return answerElicitation(r.params as Record<string, unknown>) as never;
  });
  client.setRequestHandler(CreateMessageRequestSchema, () => ({
    role: "assistant",
    content: { type: "text", text: "sampled by the host" },
    model: "test-model",
  }));
  await client.connect(transport);
  return { client, stderr: () => stderr, logs, elicitations, close: () => client.close() };
}

async function tool(h: Host, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const r = await h.client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)} ${h.stderr()}`);
  return (r.structuredContent as { value: unknown }).value;
}

interface StepResult {
  ok?: Record<string, unknown> & { content?: string };
  error?: { code: string; message: string };
}
/** A step's result, or a failure that shows the error it got instead. */
function okOf<T>(r: StepResult | undefined): T {
  if (r?.ok === undefined) throw new Error(`step failed: ${JSON.stringify(r)}`);
  return r.ok as unknown as T;
}
const run = (h: Host, steps: object[]) => tool(h, "run", { steps }) as Promise<StepResult[]>;

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const consentAll = { op: "consent", message: "the test's work", paths: ["proj"] };
/** Two roots, so paths name their root first ("proj/a.txt"); with one root they are relative to it. */
const ROOTS = (): string[] => ["--root", proj, "--root", `${docs}:ro`];

describe("afs broker", () => {
  it("forwards plain MCP both ways and declares brokering to the server", async () => {
    const h = await host(["--root", proj, "--consent", "allow"]);
    try {
      const { tools } = await h.client.listTools();
      expect(tools.map((t) => t.name)).toContain("run");
      expect(await tool(h, "echo", { text: "hi there" })).toBe("hi there");
      const sampled = (await tool(h, "ask_host", { kind: "sampling" })) as { content: { text: string } };
      expect(sampled.content.text).toBe("sampled by the host");
      expect(await tool(h, "ask_host", { kind: "elicitation" })).toEqual({ action: "decline" });
      expect(h.elicitations).toHaveLength(1);
      expect(await tool(h, "notify", { text: "hello host" })).toBe("sent");
      expect(h.logs).toContain("hello host");
      const caps = (await tool(h, "caps")) as { brokering: boolean; capabilities: Record<string, unknown> };
      expect(caps.brokering).toBe(true);
      expect(caps.capabilities).toMatchObject({
        elicitation: {},
        sampling: {},
        roots: { listChanged: true },
        experimental: { filesystemBrokering: {} },
      });
    } finally {
      await h.close();
    }
  });

  it("answers roots/list and every files/* method within the roots", async () => {
    const h = await host(["--root", proj, "--root", `${docs}:ro`, "--consent", "allow"]);
    try {
      const r = await run(h, [
        { op: "roots" },
        { ...consentAll, paths: ["proj", "docs"] },
        { op: "read", path: "proj/a.txt" },
        { op: "write", path: "proj/new.txt", content: "fresh\n" },
        { op: "list", path: "proj" },
        { op: "create", path: "proj/dir", type: "directory" },
        { op: "rename", from: "proj/new.txt", to: "proj/dir/moved.txt" },
        { op: "delete", path: "proj/sub", recursive: true },
        { op: "read", path: "proj/missing.txt" },
        { op: "read", path: "proj/../outside/secret.txt" },
        { op: "write", path: "docs/readme.md", content: "overwritten\n" },
        { op: "read", path: "docs/readme.md" },
      ]);
      const roots = okOf<{ roots: Array<{ uri: string; name: string }> }>(r[0]).roots;
      expect(roots.map((x) => x.name)).toEqual(["proj", "docs"]);
      expect(roots[0]?.uri).toBe(pathToFileURL(proj).href);
      expect(r[1]?.ok).toMatchObject({ granted: true });
      expect(r[2]?.ok).toMatchObject({ content: "alpha\n", eof: true });
      expect(r[3]?.ok).toMatchObject({ done: true });
      expect(
        okOf<Array<{ name: string }>>(r[4])
          .map((e) => e.name)
          .sort(),
      ).toEqual(["a.txt", "new.txt", "sub"]);
      expect(readFileSync(join(proj, "dir", "moved.txt"), "utf8")).toBe("fresh\n");
      expect(r[7]?.error).toBeUndefined();
      expect(r[8]?.error?.code).toBe("FILE_NOT_FOUND");
      expect(["PERMISSION_DENIED", "INVALID_PATH"]).toContain(r[9]?.error?.code);
      expect(r[10]?.error?.code).toBe("PERMISSION_DENIED");
      expect(r[11]?.ok).toMatchObject({ content: "# docs\n" });
      expect(readFileSync(join(docs, "readme.md"), "utf8")).toBe("# docs\n");
    } finally {
      await h.close();
    }
  });

  it("refuses under --consent deny and narrows to a policy file's paths", async () => {
    const denied = await host([...ROOTS(), "--consent", "deny"]);
    try {
      const r = await run(denied, [consentAll, { op: "read", path: "proj/a.txt" }]);
      expect(r[0]?.ok).toMatchObject({ granted: false, approvedPaths: [] });
      expect(r[1]?.error?.code).toBe("PERMISSION_DENIED");
    } finally {
      await denied.close();
    }
    const policy = join(base, "policy.json");
    writeFileSync(policy, JSON.stringify({ paths: [{ path: join(proj, "dir"), mode: "read" }] }));
    const narrowed = await host([...ROOTS(), "--consent", policy]);
    try {
      const r = await run(narrowed, [
        { ...consentAll, paths: ["proj/dir", "proj/a.txt"] },
        { op: "read", path: "proj/dir/moved.txt" },
        { op: "read", path: "proj/a.txt" },
        { op: "write", path: "proj/dir/moved.txt", content: "no\n" },
      ]);
      expect(r[0]?.ok, JSON.stringify(r[0])).toMatchObject({ approvedPaths: ["proj/dir"] });
      expect(r[1]?.ok).toMatchObject({ content: "fresh\n" });
      expect(r[2]?.error?.code).toBe("PERMISSION_DENIED");
      expect(r[3]?.error?.code).toBe("PERMISSION_DENIED");
    } finally {
      await narrowed.close();
    }
  });

  it("asks the person through the host's elicitation under --consent ask", async () => {
    const h = await host(["--root", proj, "--root", docs, "--consent", "ask"], () => ({
      action: "accept",
      content: { path_0: false, path_1: true },
    }));
    try {
      const r = await run(h, [
        { ...consentAll, paths: ["proj", "docs"] },
        { op: "read", path: "docs/readme.md" },
        { op: "read", path: "proj/a.txt" },
      ]);
      expect(h.elicitations).toHaveLength(1);
      expect(String(h.elicitations[0]?.message)).toContain("the test's work");
      expect(String(h.elicitations[0]?.message)).toContain(docs);
      expect(r[0]?.ok).toMatchObject({ approvedPaths: ["docs"] });
      expect(r[1]?.ok).toMatchObject({ content: "# docs\n" });
      expect(r[2]?.error?.code).toBe("PERMISSION_DENIED");
    } finally {
      await h.close();
    }
  });

  it("round-trips 50 MiB of binary in 1 MiB chunks, watches, and audits without content", async () => {
    const audit = join(base, "audit.jsonl");
    const h = await host([...ROOTS(), "--consent", "allow", "--audit", audit]);
    try {
      const big = randomBytes(50 * 1024 * 1024);
      writeFileSync(join(proj, "big.bin"), big);
      const r = await run(h, [
        consentAll,
        { op: "sha", path: "proj/big.bin" },
        { op: "copy", from: "proj/big.bin", to: "proj/copy.bin" },
        { op: "write", path: "proj/marker.txt", content: "CONTENT-MARKER-7f1c" },
      ]);
      expect(r[1]?.ok, JSON.stringify(r[1])).toMatchObject({ sha256: sha(big), chunks: 50, bytes: big.length });
      expect(r[2]?.ok).toMatchObject({ done: true, size: big.length });
      expect(sha(readFileSync(join(proj, "copy.bin")))).toBe(sha(big));

      const watching = run(h, [{ op: "watch", path: "proj", count: 1, timeoutMs: 15_000 }]);
      await until(() => h.logs.some((l) => l.startsWith("watching")));
      writeFileSync(join(proj, "seen.txt"), "made on disk\n");
      const [w] = await watching;
      const events = okOf<{ events: Array<{ path: string; event: string }> }>(w).events;
      expect(events.some((e) => e.path.endsWith("seen.txt"))).toBe(true);
    } finally {
      await h.close();
    }
    const text = readFileSync(audit, "utf8");
    const lines = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.some((l) => l.method === "files/write" && l.path === "proj/marker.txt")).toBe(true);
    expect(text).not.toContain("CONTENT-MARKER");
  }, 240_000);
});

/** `afs broker` on raw pipes, to see its exit status and stderr. */
function raw(args: string[]): { child: ChildProcess; done: Promise<{ status: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [MAIN, "broker", ...args], { env, cwd: base, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<{ status: number | null; stderr: string }>((resolve) =>
    child.once("exit", (status) => resolve({ status, stderr })),
  );
  return { child, done };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("afs broker lifecycle", () => {
  it("ends the server when the host closes stdin, and exits with the server's status when it exits", async () => {
    const h = await host(["--root", proj, "--consent", "allow"]);
    const { pid } = (await tool(h, "caps")) as { pid: number };
    expect(alive(pid)).toBe(true);
    await h.close();
    await until(() => !alive(pid));

    const token = `afs-broker-test-${process.pid}-${Date.now()}`;
    const b = raw(["--root", proj, "--consent", "allow", "--", ...SERVER, "normal", token]);
    const send = (m: object) => b.child.stdin?.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "run", arguments: { steps: [{ op: "exit", status: 5 }] } },
    });
    const { status } = await b.done;
    expect(status).toBe(5);
    await until(() => running(token).length === 0, 5000);
  });

  it("reports bad input in one line with a non-zero status", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--", ...SERVER], /no --root given/],
      [["--root", join(base, "nope"), "--", ...SERVER], /nope/],
      [["--root", proj, "--", "afs-no-such-server-cmd"], /afs-no-such-server-cmd was not found/],
      [["--root", proj, "--consent", "maybe", "--", ...SERVER], /--consent maybe/],
      [["--root", proj, "--", ...SERVER, "exit"], /exited with status 3 before answering/],
    ];
    for (const [args, pattern] of cases) {
      const { done } = raw(args);
      const { status, stderr } = await done;
      expect(status, stderr).not.toBe(0);
      expect(stderr).toMatch(pattern);
      expect(
        stderr
          .trim()
          .split("\n")
          .filter((l) => l.startsWith("afs: ")),
      ).toHaveLength(1);
    }
  });
});

/** Command lines of running processes that carry `token` (none should survive the broker). */
function running(token: string): string[] {
  return execFileSync("ps", ["-eo", "args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.includes(token) && !l.includes("ps -eo"));
}
