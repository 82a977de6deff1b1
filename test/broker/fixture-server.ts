// An MCP server of our own on the official SDK, for `afs broker` to run as a child. Its `run` tool
// takes a JSON list of steps done through BrokeredFiles (the server helper) and answers one result
// or error per step; `echo`, `caps`, `ask_host` and `notify` prove plain MCP passes both ways;
// `bench` times brokered vs. direct node:fs reads/writes inside the server.
// Modes (argv[2]): "normal" (default), "exit" (exits at once with status 3).
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { BrokeredFiles, clientSupportsBrokering, type Extra } from "../../src/protocols/broker/client.js";

if (process.argv[2] === "exit") process.exit(3);

type Step =
  | { op: "roots" }
  | { op: "consent"; message: string; paths: string[] }
  | { op: "read"; path: string; encoding?: "utf-8" | "base64"; offset?: number; length?: number }
  | { op: "write"; path: string; content: string; create?: boolean; expectedSha256?: string }
  | { op: "list"; path: string; recursive?: boolean }
  | { op: "create"; path: string; type: "file" | "directory" }
  | { op: "delete"; path: string; recursive?: boolean }
  | { op: "rename"; from: string; to: string }
  | { op: "sha"; path: string }
  | { op: "copy"; from: string; to: string }
  | { op: "watch"; path: string; count: number; timeoutMs?: number }
  | { op: "exit"; status: number };

const server = new Server({ name: "fixture-server", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } });

const obj = { type: "object" as const, properties: {} };
const tools = [
  { name: "echo", description: "answers its text", inputSchema: obj },
  { name: "caps", description: "the client capabilities this server sees", inputSchema: obj },
  { name: "ask_host", description: "sends elicitation/create or sampling/createMessage to the host", inputSchema: obj },
  { name: "notify", description: "sends a logging notification, then answers", inputSchema: obj },
  { name: "run", description: "brokered file steps (JSON list)", inputSchema: obj },
  { name: "bench", description: "timed reads/writes, brokered or direct", inputSchema: obj },
];
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

const answer = (value: unknown) => ({
  content: [{ type: "text" as const, text: JSON.stringify(value) }],
  structuredContent: { value } as Record<string, unknown>,
});

async function step(files: BrokeredFiles, s: Step): Promise<unknown> {
  switch (s.op) {
    case "roots":
      return files.roots();
    case "consent":
      return files.consent(s.message, s.paths);
    case "read":
      return files.read(s.path, s);
    case "write":
      return files.write(s.path, s.content, s);
    case "list":
      return files.listAll(s.path, { recursive: s.recursive ?? false });
    case "create":
      return files.create(s.path, s.type);
    case "delete":
      return files.delete(s.path, { recursive: s.recursive ?? false });
    case "rename":
      return files.rename(s.from, s.to);
    case "sha": {
      const hash = createHash("sha256");
      let chunks = 0;
      let bytes = 0;
      for await (const chunk of files.readStream(s.path)) {
        hash.update(chunk);
        chunks++;
        bytes += chunk.length;
      }
      return { sha256: hash.digest("hex"), chunks, bytes };
    }
    case "copy":
      return files.writeStream(s.to, files.readStream(s.from));
    case "watch": {
      const events: unknown[] = [];
      const watch = await files.watch(s.path, { recursive: true });
      await server.sendLoggingMessage({ level: "info", data: `watching ${s.path}` });
      const timer = setTimeout(() => void watch.close(), s.timeoutMs ?? 10_000);
      for await (const event of watch) {
        events.push(event);
        if (events.length >= s.count) break;
      }
      clearTimeout(timer);
      return { events };
    }
    case "exit":
      setTimeout(() => process.exit(s.status), 50);
      return { exiting: s.status };
  }
}

interface BenchArgs {
  via: "broker" | "disk";
  op: "read" | "write";
  n: number;
  size: number;
  /** broker: the path prefix inside the roots ("" with a single root); disk: the directory itself. */
  dir: string;
}

async function bench(extra: Extra, a: BenchArgs): Promise<{ ms: number[] }> {
  const files = a.via === "broker" ? BrokeredFiles.from(server, extra) : null;
  const content = "x".repeat(a.size);
  const ms: number[] = [];
  for (let i = 0; i < a.n; i++) {
    const path = a.via === "broker" ? `${a.dir ? `${a.dir}/` : ""}b${i % 100}.txt` : join(a.dir, `b${i % 100}.txt`);
    const start = process.hrtime.bigint();
    if (files) {
      if (a.op === "read") await files.read(path);
      else await files.write(path, content);
    } else if (a.op === "read") await readFile(path, "utf8");
    else await writeFile(path, content);
    ms.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { ms };
}

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  switch (request.params.name) {
    case "echo":
      return answer(args.text);
    case "caps":
      return answer({
        pid: process.pid,
        brokering: clientSupportsBrokering(server),
        capabilities: server.getClientCapabilities(),
      });
    case "ask_host":
      return answer(
        args.kind === "sampling"
          ? await extra.sendRequest(
              {
                method: "sampling/createMessage",
                params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 },
              },
              CreateMessageResultSchema,
            )
          : await extra.sendRequest(
              {
                method: "elicitation/create",
                params: { message: "favourite colour?", requestedSchema: { type: "object", properties: {} } },
              },
              ElicitResultSchema,
            ),
      );
    case "notify":
      await server.sendLoggingMessage({ level: "info", data: args.text });
      return answer("sent");
    case "bench":
      return answer(await bench(extra, args as unknown as BenchArgs));
    case "run": {
      const steps = (typeof args.steps === "string" ? JSON.parse(args.steps) : args.steps) as Step[];
      const results: unknown[] = [];
      for (const s of steps) {
        try {
          results.push({ ok: await step(BrokeredFiles.from(server, extra), s) });
        } catch (e) {
          const err = e as { code?: unknown; message?: string; rpcCode?: number };
          results.push({ error: { code: err.code, message: err.message, rpcCode: err.rpcCode } });
        }
      }
      return answer(results);
    }
    default:
      throw new Error(`no tool ${request.params.name}`);
  }
});

await server.connect(new StdioServerTransport());
// The SDK's stdio transport never notices its input ending; a host that closes stdin is gone.
process.stdin.once("end", () => process.exit(0));
