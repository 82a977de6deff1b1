// The official MCP conformance suite (@modelcontextprotocol/conformance) against the built
// `afs serve --auth none` on loopback: each server scenario that applies to a server of tools and
// afs:// resources, stateless, is one test, failing with the suite's checks printed when any check fails.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { write } from "../../src/ops/index.js";
import { MAIN, ROOT } from "../cli/run.js";
import { type Served, serve } from "./serve.js";
import { type Home, home } from "./session.js";

const CONFORMANCE = join(ROOT, "node_modules/.bin/conformance");

/** Server scenarios of conformance 0.1.13 that apply to afs serve. */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"];

/**
 * Server scenarios left out, and why none can apply to afs serve:
 * - logging-set-level, tools-call-with-logging: afs does not declare the logging capability (its
 *   logs go to stderr), so logging/setLevel is rightly "method not found".
 * - completion-complete: completions complete prompt and resource-template arguments; afs has neither.
 * - tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -error,
 *   -with-progress, -sampling, -elicitation, json-schema-2020-12: each calls or lists a fixture
 *   tool by name (test_simple_text, test_error_handling, json_schema_2020_12_tool, …) that only the
 *   suite's reference server has; afs's tool table is its own. (Error results and schema handling
 *   are covered by test/mcp/errors.test.ts with the SDK client.)
 * - elicitation-sep1034-defaults, elicitation-sep1330-enums: afs never elicits from the user.
 * - server-sse-polling, server-sse-multiple-streams: resumable SSE streams on a session (SEP-1699);
 *   afs serve is stateless (no session id, JSON responses, no GET stream), so both check nothing.
 * - resources-read-text, -read-binary, -templates-read, -subscribe, -unsubscribe: each reads or
 *   subscribes to a fixture URI (test://static-text, test://template/123/data, test://watched-resource)
 *   that only the suite's reference server has; afs's resources are afs:// files (covered by
 *   test/mcp/resources.test.ts with the SDK client), and afs serve's stateless HTTP has no subscriptions.
 * - prompts-*: afs offers no prompts.
 */

interface Check {
  id: string;
  description: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
  details?: unknown;
}

const run = promisify(execFile);

let h: Home;
let server: Served;
let out: string;

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first (npm test does)`);
  h = await home();
  await h.afs.workspaces.create("demo");
  await write(await h.afs.workspaces.volume("demo"), { path: "/readme.md", content: "# demo\n" });
  server = await serve(h, ["--auth", "none", "--host", "127.0.0.1", "--workspace", "demo"]);
  out = await mkdtemp(join(tmpdir(), "afs-conformance-"));
});
afterAll(async () => {
  await server?.stop();
  await h?.cleanup();
  if (out) await rm(out, { recursive: true, force: true });
});

/** Runs one scenario; returns the exit status, the printed output and the checks it saved. */
async function scenario(name: string): Promise<{ status: number; output: string; checks: Check[] }> {
  const dir = join(out, name);
  const args = ["server", "--url", server.url, "--scenario", name, "-o", dir];
  let status = 0;
  let output = "";
  try {
    const r = await run(CONFORMANCE, args, {
      cwd: ROOT,
      timeout: 30_000,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    output = r.stdout + r.stderr;
  } catch (e) {
    const failed = e as { code?: number | string; stdout?: string; stderr?: string };
    status = typeof failed.code === "number" ? failed.code : -1;
    output = `${failed.stdout ?? ""}${failed.stderr ?? ""}${status === -1 ? String(e) : ""}`;
  }
  // The suite saves <dir>/server-<scenario>-<time>/checks.json.
  const runs = existsSync(dir) ? await readdir(dir) : [];
  const checks = runs[0] ? (JSON.parse(await readFile(join(dir, runs[0], "checks.json"), "utf8")) as Check[]) : [];
  return { status, output, checks };
}

describe("MCP conformance 0.1.13 against afs serve --auth none", () => {
  for (const name of SCENARIOS) {
    it(name, async () => {
      const r = await scenario(name);
      const report = `conformance ${name} exited ${r.status}\nchecks: ${JSON.stringify(r.checks, null, 2)}\n${r.output}`;
      const notPassed = r.checks.filter((c) => c.status !== "SUCCESS" && c.status !== "INFO");
      expect(notPassed, report).toEqual([]);
      expect(
        r.checks.some((c) => c.status === "SUCCESS"),
        report,
      ).toBe(true);
      expect(r.status, report).toBe(0);
    });
  }
});
