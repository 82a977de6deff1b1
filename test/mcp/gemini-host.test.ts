// A real MCP host: Gemini CLI 0.61, headless (-p) and offline (its model replaced by scripted
// responses, --fake-responses-non-strict), runs the built `afs mcp` from a settings.json
// `mcpServers` entry, discovers afs's tools and resources, reads a file as a resource and calls
// file_grep, file_write and checkpoint_create.
// Gemini names an MCP tool mcp_<server>_<tool>, so the server is called "afs" (no "_" in it).
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { MAIN, ROOT } from "../cli/run.js";
import { ensureBuilt, type Home, home } from "./session.js";

const GEMINI = join(ROOT, "node_modules/@google/gemini-cli/bundle/gemini.js");

/** One model response: a stream of one chunk, ending with STOP as Gemini requires. */
const response = (parts: object[]) =>
  JSON.stringify({
    method: "generateContentStream",
    response: [{ candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }] }],
  });
const call = (id: string, tool: string, args: object) => ({ functionCall: { id, name: `mcp_afs_${tool}`, args } });

const SCRIPT = [
  // Gemini's own tool for MCP resources: it finds the URI among those afs listed at discovery.
  response([{ functionCall: { id: "c0", name: "read_mcp_resource", args: { uri: "afs://demo/src/app.ts" } } }]),
  response([call("c1", "file_grep", { pattern: "TODO" })]),
  response([call("c2", "file_write", { path: "/notes/plan.md", content: "# Plan\n- fix the TODO in /src/app.ts\n" })]),
  response([call("c3", "checkpoint_create", { checkpoint: "gemini-plan", description: "plan written by Gemini" })]),
  response([{ text: "Wrote /notes/plan.md and saved checkpoint gemini-plan." }]),
];

let h: Home;
let geminiHome: string;

beforeAll(async () => {
  ensureBuilt();
  h = await home();
  await h.afs.workspaces.create("demo");
  await write(await h.afs.workspaces.volume("demo"), {
    path: "/src/app.ts",
    content: "// TODO: greet\nexport const hello = 1;\n",
  });
  geminiHome = join(h.home, "..", "gemini-home");
  mkdirSync(join(geminiHome, ".gemini"), { recursive: true });
  writeFileSync(
    join(geminiHome, ".gemini", "settings.json"),
    JSON.stringify({
      // No telemetry, no update checks, no folder-trust prompt: an isolated, quiet, offline Gemini.
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      security: { folderTrust: { enabled: false }, auth: { selectedType: "gemini-api-key" } },
      mcpServers: {
        afs: {
          command: process.execPath,
          args: [MAIN, "mcp", "--workspace", "demo", "--profile", "workspace-rw-checkpoint"],
          env: { AFS_HOME: h.home, AFS_ACTOR: "gemini" },
          trust: true,
        },
      },
    }),
  );
});
afterAll(() => h?.cleanup());

function gemini(lines: string[], prompt: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const script = join(geminiHome, `responses-${Math.random().toString(16).slice(2)}.jsonl`);
  writeFileSync(script, `${lines.join("\n")}\n`);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AFS_")) env[k] = v;
  Object.assign(env, {
    HOME: geminiHome,
    GEMINI_CLI_HOME: geminiHome,
    GEMINI_API_KEY: "dummy",
    GEMINI_CLI_NO_RELAUNCH: "true",
    NO_COLOR: "1",
  });
  const args = [GEMINI, "-p", prompt, "--fake-responses-non-strict", script, "-m", "gemini-2.5-flash"];
  args.push("--approval-mode", "yolo", "--output-format", "json");
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: geminiHome, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("exit", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Every chat session Gemini recorded under its home (one JSON object a line). */
function chatRecord(): string {
  const tmp = join(geminiHome, ".gemini", "tmp");
  return readdirSync(tmp, { recursive: true, encoding: "utf8" })
    .filter((f) => /chats[\\/]session-.*\.jsonl$/.test(f))
    .map((f) => readFileSync(join(tmp, f), "utf8"))
    .join("\n");
}

describe("Gemini CLI as an MCP host of afs mcp", () => {
  it("discovers afs's tools and resources, reads a resource, calls file_grep, file_write and checkpoint_create", async () => {
    const r = await gemini(SCRIPT, "find the TODOs, write a plan to /notes/plan.md and checkpoint it");
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      response: string;
      stats: { tools: { byName: Record<string, { count: number; success: number; fail: number }> } };
    };
    expect(out.response).toContain("Wrote /notes/plan.md and saved checkpoint gemini-plan.");
    for (const tool of ["file_grep", "file_write", "checkpoint_create"]) {
      expect(out.stats.tools.byName[`mcp_afs_${tool}`], `${tool}: ${r.stdout}`).toMatchObject({ count: 1, success: 1 });
    }

    // The grep's answer reached the model: Gemini's own session record holds the function response.
    const record = chatRecord();
    expect(record).toContain('"name":"mcp_afs_file_grep"');
    expect(record).toContain("/src/app.ts:1:// TODO: greet");

    // So did the file Gemini read as a resource (the grep alone never shows its second line).
    expect(out.stats.tools.byName.read_mcp_resource).toMatchObject({ count: 1, success: 1 });
    expect(record).toContain('"name":"read_mcp_resource"');
    expect(record).toContain("export const hello = 1;");

    // The workspace shows what Gemini did through afs, attributed to the actor afs mcp ran as.
    const volume = await h.afs.workspaces.volume("demo");
    expect((await volume.readFile("/notes/plan.md")).toString()).toBe("# Plan\n- fix the TODO in /src/app.ts\n");
    const cp = await h.afs.checkpoints.get("demo", "gemini-plan");
    expect(cp).toMatchObject({ name: "gemini-plan", description: "plan written by Gemini" });
    const [written] = await h.afs.events.recent("demo", { limit: 1, path: "/notes/plan.md" });
    expect(written).toMatchObject({ op: "write", actor: "gemini", surface: "mcp" });
  });
});
