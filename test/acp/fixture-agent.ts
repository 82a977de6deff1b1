// An ACP agent of our own, built on the official SDK's agent side, for `afs acp` to run as a child.
// Each prompt is a JSON list of steps (fs calls, permission requests, the afs MCP server it was
// handed, writes straight to disk as an agent's shell would); it answers with one
// "RESULT <json>" line per step as agent text, so a test reads what happened from afs acp's stdout.
// Modes (argv[2]): "normal" (default), "silent" (never answers initialize), "exit" (exits at once).
import { writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

type Step =
  | { op: "read"; path: string; line?: number; limit?: number; session?: string }
  | { op: "write"; path: string; content: string }
  | { op: "permission"; title: string; path: string }
  | { op: "mcp"; tool?: string; args?: Record<string, unknown> }
  | { op: "disk-write"; path: string; content: string }
  | { op: "race"; path: string; writes: number; reads: number }
  | { op: "sleep"; ms: number };

const mode = process.argv[2] ?? "normal";
if (mode === "exit") process.exit(3);

let mcpServers: acp.McpServer[] = [];
let mcp: Client | null = null;

async function mcpClient(): Promise<Client> {
  if (mcp) return mcp;
  const server = mcpServers.find((s): s is acp.McpServerStdio & { name: string } => "command" in s);
  if (!server) throw new Error("no stdio MCP server was handed to this session");
  const client = new Client({ name: "fixture-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: {
        ...(process.env as Record<string, string>),
        ...Object.fromEntries(server.env.map((e) => [e.name, e.value])),
      },
      stderr: "ignore",
    }),
  );
  mcp = client;
  return client;
}

async function run(ctx: acp.AgentContext, sessionId: string, step: Step): Promise<unknown> {
  switch (step.op) {
    case "read":
      return ctx.request(acp.methods.client.fs.readTextFile, {
        sessionId: step.session ?? sessionId,
        path: step.path,
        ...(step.line === undefined ? {} : { line: step.line }),
        ...(step.limit === undefined ? {} : { limit: step.limit }),
      });
    case "write":
      return ctx.request(acp.methods.client.fs.writeTextFile, { sessionId, path: step.path, content: step.content });
    case "permission":
      return ctx.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "perm-1", title: step.title, locations: [{ path: step.path }] },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      });
    case "mcp": {
      const client = await mcpClient();
      if (!step.tool) return { tools: (await client.listTools()).tools.map((t) => t.name).sort() };
      const result = await client.callTool({ name: step.tool, arguments: step.args ?? {} });
      return result.structuredContent;
    }
    case "disk-write":
      await writeFile(step.path, step.content);
      return { ok: true };
    case "sleep":
      await new Promise((done) => setTimeout(done, step.ms));
      return { slept: step.ms };
    case "race": {
      const versions = Array.from({ length: step.writes }, (_, i) => `${String(i % 10).repeat(2000)}\n`);
      await ctx.request(acp.methods.client.fs.writeTextFile, {
        sessionId,
        path: step.path,
        content: versions[0] ?? "",
      });
      const reads = Array.from({ length: step.reads }, () =>
        ctx.request(acp.methods.client.fs.readTextFile, { sessionId, path: step.path }),
      );
      const writes = versions.map((content) =>
        ctx.request(acp.methods.client.fs.writeTextFile, { sessionId, path: step.path, content }),
      );
      const [seen] = await Promise.all([Promise.all(reads), Promise.all(writes)]);
      return { reads: seen.length, torn: seen.filter((r) => !versions.includes(r.content)).length };
    }
  }
}

const app = acp
  .agent({ name: "fixture-agent" })
  .onRequest(acp.methods.agent.initialize, async ({ params }) => {
    if (mode === "silent") await new Promise(() => {});
    return {
      protocolVersion: 1,
      agentCapabilities: {},
      agentInfo: { name: "fixture-agent", version: "1.0.0" },
      _meta: { clientCapabilities: params.clientCapabilities },
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    mcpServers = params.mcpServers;
    return { sessionId: `fixture-${process.pid}` };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("");
    let steps: Step[];
    try {
      steps = JSON.parse(text) as Step[];
    } catch {
      steps = [];
    }
    for (const step of steps) {
      let result: unknown;
      try {
        result = { ok: await run(client, params.sessionId, step) };
      } catch (e) {
        const err = e as { code?: number; message?: string; data?: unknown };
        result = { error: { code: err.code, message: err.message, data: err.data } };
      }
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `RESULT ${JSON.stringify(result)}\n` },
        },
      });
    }
    return { stopReason: "end_turn" };
  });

const connection = app.connect(
  acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  ),
);
await connection.closed;
await (mcp as Client | null)?.close();
