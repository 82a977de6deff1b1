// The /approvals page end to end: a real `afs broker --consent console` (running our fixture MCP
// server) and a real `afs acp --approve console` (running our fixture agent) wait in the store; a
// real Chromium on a real `afs serve` shows their requests and answers them; the waiting calls
// finish (or fail, with the reason) within a second. Auth: only admin sessions see approvals.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, MAIN, ROOT } from "../cli/run.js";
import { type StoreName, testStores } from "../contract/stores.js";
import { issue, type Served, serve } from "../mcp/serve.js";
import { type Home, storeHomes } from "../mcp/session.js";
import { launch, open, screenshot } from "./browser.js";

const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const SERVER = [process.execPath, "--import", TSX, join(ROOT, "test/broker/fixture-server.ts")];
const AGENT = ["--", process.execPath, "--import", TSX, join(ROOT, "test/acp/fixture-agent.ts")];

const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
const HOSTILE_NAME = `<img src=x onerror=document.title='pwned'>.txt`;
const JS_LINK = "javascript:document.title='pwned'";

interface StepResult {
  ok?: Record<string, unknown> & { content?: string; granted?: boolean; message?: string };
  error?: { code: string | number; message: string };
}

/** An MCP host running `afs broker --consent console -- fixture-server` on the test's home. */
async function brokerHost(h: Home, proj: string, env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "broker", "--root", proj, "--consent", "console", "--", ...SERVER],
    env: { ...h.env, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const client = new Client({ name: "test-host", version: "1.0.0" });
  await client.connect(transport);
  const run = async (steps: object[]): Promise<StepResult[]> => {
    const r = await client.callTool({ name: "run", arguments: { steps } }, undefined, { timeout: 120_000 });
    if (r.isError) throw new Error(`run failed: ${JSON.stringify(r.content)} ${stderr}`);
    return (r.structuredContent as { value: StepResult[] }).value;
  };
  return { run, stderr: () => stderr, close: () => client.close() };
}

/** The request card titled `title` once it shows (the page polls every second). */
async function request(page: Page, name: RegExp | string) {
  const card = page.getByRole("article", { name });
  await card.waitFor({ timeout: 15_000 });
  return card;
}

/** Clicks `button` and returns when the approval_decide (or revoke) answer came back. */
async function decide(page: Page, click: () => Promise<void>, tool = "approval_decide"): Promise<number> {
  const answered = page.waitForResponse((r) => r.url().endsWith(`/api/tools/${tool}`));
  await click();
  const res = await answered;
  expect(res.status()).toBe(200);
  return Date.now();
}

// On each tested store: with Redis, the console (afs serve) and the waiting process are two
// processes sharing a Redis store, as two machines would.
describe.each(testStores().map((s): [StoreName] => [s]))("approvals page on %s", (store) => {
  const newHome = storeHomes(store);
  let h: Home;
  let browser: Browser;
  let served: Served;
  let base: string;
  let proj: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    ensureBuilt();
    h = await newHome();
    proj = join(h.home, "..", "proj");
    mkdirSync(join(proj, "sub"), { recursive: true });
    writeFileSync(join(proj, "a.txt"), "alpha\n");
    writeFileSync(join(proj, "sub", "b.txt"), "beta\n");
    browser = await launch();
    served = await serve(h, ["--auth", "none"]);
    base = served.url.replace(/mcp$/, "");
    env = { AFS_CONSOLE_URL: base };
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await h?.cleanup();
  });

  it("shows a broker's consent request; allowing some paths lets the waiting files/read finish within a second; revoke ends the grant", async () => {
    const b = await brokerHost(h, proj, env);
    const { page, problems } = await open(browser, `${base}approvals`);
    try {
      await page.getByText("Nothing is waiting").waitFor();
      const running = b.run([
        { op: "consent", message: `index it ${HOSTILE} ${JS_LINK}`, paths: ["a.txt", "sub"] },
        { op: "read", path: "a.txt" },
        { op: "read", path: "sub/b.txt" },
      ]);
      const card = await request(page, /file access for fixture-server/);
      expect(await card.getByText(`index it ${HOSTILE} ${JS_LINK}`).textContent()).toBe(
        `index it ${HOSTILE} ${JS_LINK}`,
      );
      expect(b.stderr()).toContain(`waiting for a decision in the afs console: ${base}approvals`);
      await card.getByRole("checkbox", { name: /sub/ }).uncheck();
      const decided = await decide(page, () => card.getByRole("button", { name: "Allow selected (1)" }).click());
      const results = await running;
      const waited = Date.now() - decided;
      console.log(`consent allowed in the page -> files/read finished in ${waited} ms`);
      expect(waited).toBeLessThan(1000);
      expect(results[0]?.ok).toMatchObject({ granted: true, approvedPaths: ["a.txt"] });
      expect(results[1]?.ok?.content).toBe("alpha\n");
      expect(results[2]?.error?.code).toBe("PERMISSION_DENIED");

      // The grant is listed; revoking it in the page refuses the next read at once.
      const grants = page.getByRole("table").filter({ hasText: "fixture-server" }).first();
      await grants.getByRole("button", { name: /Revoke the grant for fixture-server/ }).waitFor();
      expect((await b.run([{ op: "read", path: "a.txt" }]))[0]?.ok?.content).toBe("alpha\n");
      await decide(
        page,
        () => grants.getByRole("button", { name: /Revoke the grant for fixture-server/ }).click(),
        "approval_revoke_grant",
      );
      const after = await b.run([{ op: "read", path: "a.txt" }]);
      expect(after[0]?.error?.code).toBe("PERMISSION_DENIED");
      expect(after[0]?.error?.message).toMatch(/revoked/);
      await page.getByText("No grants in force.").waitFor();
      expect(await page.title()).not.toContain("pwned");
      expect(await page.locator("main img").count()).toBe(0);
      expect(await page.locator("main a[href^='javascript']").count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
      await b.close();
    }
  }, 90_000);

  it("denying a consent request fails the waiting call with the person's reason", async () => {
    const b = await brokerHost(h, proj, env);
    const { page, problems } = await open(browser, `${base}approvals`);
    try {
      const running = b.run([
        { op: "consent", message: "read a", paths: ["a.txt"] },
        { op: "read", path: "a.txt" },
      ]);
      const card = await request(page, /file access for fixture-server/);
      await card.getByLabel(/Note for the agent/).fill("not today");
      const decided = await decide(page, () => card.getByRole("button", { name: "Deny" }).click());
      const results = await running;
      expect(Date.now() - decided).toBeLessThan(1000);
      expect(results[0]?.ok).toMatchObject({ granted: false });
      expect(results[0]?.ok?.message).toBe("the request was denied in the afs console: not today");
      expect(results[1]?.error?.code).toBe("PERMISSION_DENIED");
      await page.getByRole("cell", { name: "not today" }).waitFor();
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
      await b.close();
    }
  }, 90_000);

  it("an afs acp --approve console write is shown with its diff, allowed, and the next one denied", async () => {
    const dir = join(h.home, "..", "acp-project");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "keep.txt"), "unchanged\n");
    const steps = [
      { op: "write", path: join(dir, HOSTILE_NAME), content: `first line\n${HOSTILE}\n` },
      // Allowed "for the rest of the session" above: not asked again.
      { op: "write", path: join(dir, HOSTILE_NAME), content: `second line\n${HOSTILE}\n` },
      { op: "write", path: join(dir, "keep.txt"), content: "overwritten\n" },
    ];
    const child: ChildProcess = spawn(
      process.execPath,
      [MAIN, "acp", "--dir", dir, "--approve", "console", "--prompt", JSON.stringify(steps), ...AGENT],
      { env: { ...h.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    const { page, problems } = await open(browser, `${base}approvals`);
    try {
      const first = await request(page, /write .*<img/);
      const diff = first.getByRole("figure");
      expect(await diff.textContent()).toContain(`+${HOSTILE}`);
      expect(await first.getByText(join(dir, HOSTILE_NAME), { exact: true }).count()).toBe(1);
      if (store === "sqlite") await screenshot(page, "approvals");
      await first.getByRole("checkbox", { name: /Also allow later writes/ }).check();
      const allowedAt = await decide(page, () => first.getByRole("button", { name: "Allow all" }).click());
      const second = await request(page, /write .*keep\.txt/);
      expect(Date.now() - allowedAt).toBeLessThan(3000);
      // The session's grant is listed while the session runs.
      await page.getByRole("button", { name: /Revoke the grant for fixture-agent/ }).waitFor();
      expect(await second.getByRole("figure").textContent()).toContain("+overwritten");
      await second.getByLabel(/Note for the agent/).fill("keep it as it is");
      await decide(page, () => second.getByRole("button", { name: "Deny" }).click());
      expect(await exited).toBe(0);
      const results = out
        .split("\n")
        .filter((l) => l.startsWith("RESULT "))
        .map((l) => JSON.parse(l.slice(7)) as StepResult);
      expect(results[0]?.ok).toBeDefined();
      expect(results[1]?.ok).toBeDefined();
      expect(results[2]?.error?.message).toContain("keep it as it is");
      expect(readFileSync(join(dir, HOSTILE_NAME), "utf8")).toBe(`second line\n${HOSTILE}\n`);
      expect(err).toMatch(/allowed write .*<img.* \(grant\)/);
      // The session ended: its grant is no longer in force.
      await page.getByText("No grants in force.").waitFor();
      expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("unchanged\n");
      expect(err).toContain(`waiting for a decision in the afs console: ${base}approvals`);
      expect(await page.title()).not.toContain("pwned");
      expect(await page.locator("main img").count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    }
  }, 120_000);

  describe("with tokens", () => {
    let tokenServed: Served;
    let tokenBase: string;
    beforeAll(async () => {
      await h.afs.workspaces.create("demo");
      tokenServed = await serve(h);
      tokenBase = tokenServed.url.replace(/mcp$/, "");
    });
    afterAll(() => tokenServed?.stop());

    it("a workspace-ro or workspace-rw token sees no approvals; admin-ro sees but cannot decide", async () => {
      for (const profile of ["workspace-ro", "workspace-rw"]) {
        const t = issue(h, ["--workspace", "demo", "--profile", profile]);
        const res = await fetch(`${tokenBase}api/tools/approval_list`, {
          method: "POST",
          headers: { Authorization: `Bearer ${t.secret}`, "Content-Type": "application/json" },
          body: "{}",
        });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("PERMISSION_DENIED");
      }
      const ro = issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]);
      const { page, problems } = await open(browser, `${tokenBase}approvals`);
      await page.getByLabel("Token").fill(ro.secret);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("this session cannot see them").waitFor();
      expect(await page.getByRole("link", { name: "Approvals" }).count()).toBe(0);
      expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
      await page.context().close();

      const adminRo = issue(h, ["--control-plane", "--profile", "admin-ro"]);
      const headers = { Authorization: `Bearer ${adminRo.secret}`, "Content-Type": "application/json" };
      const list = await fetch(`${tokenBase}api/tools/approval_list`, { method: "POST", headers, body: "{}" });
      expect(list.status).toBe(200);
      const decideRes = await fetch(`${tokenBase}api/tools/approval_decide`, {
        method: "POST",
        headers,
        body: JSON.stringify({ id: "x", allow: false }),
      });
      expect(decideRes.status).toBe(403);
    });
  });
});
