// The console's shell end to end: `afs serve` serves the page and its API, a real Chromium loads
// it, and the security edges (token sign-in, cookie, CSP, Origin) hold.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../cli/run.js";
import { issue, type Served, serve } from "../mcp/serve.js";
import { type Home, home } from "../mcp/session.js";
import { launch, open, screenshot } from "./browser.js";

const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;

describe("console shell", () => {
  let h: Home;
  let browser: Browser;
  beforeAll(async () => {
    ensureBuilt();
    h = await home();
    await h.afs.workspaces.create("demo", { description: HOSTILE });
    browser = await launch();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.cleanup();
  });

  describe("with --auth none", () => {
    let served: Served;
    let base: string;
    beforeAll(async () => {
      served = await serve(h, ["--auth", "none"]);
      base = served.url.replace(/mcp$/, "");
    });
    afterAll(() => served?.stop());

    it("lists the workspaces, renders agents' text as text, and logs no error", async () => {
      const { page, problems } = await open(browser, base);
      await page.getByRole("link", { name: "demo" }).waitFor();
      const cell = page.getByRole("cell", { name: HOSTILE });
      expect(await cell.textContent()).toBe(HOSTILE);
      expect(await page.title()).not.toContain("pwned");
      expect(await page.locator("main img").count()).toBe(0);
      await screenshot(page, "workspaces");
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("answers every page path with the app and a strict CSP", async () => {
      const res = await fetch(`${base}ws/demo/files/a/b.txt?at=cp1`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await res.text()).not.toMatch(/<script>(?!<\/script>)/);
    });

    it("serves its assets compressed", async () => {
      const html = await (await fetch(base)).text();
      const js = /src="(\/assets\/app-[^"]+\.js)"/.exec(html)?.[1];
      expect(js).toBeDefined();
      const res = await fetch(`${base}${js?.slice(1)}`, { headers: { "Accept-Encoding": "br" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toContain("immutable");
    });

    it("refuses a state-changing call from another site's page", async () => {
      const res = await fetch(`${base}api/tools/workspace_create`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
        body: JSON.stringify({ name: "evil" }),
      });
      expect(res.status).toBe(403);
      const bare = await fetch(`${base}api/tools/workspace_create`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "evil" }),
      });
      expect(bare.status).toBe(403);
      expect((await h.afs.workspaces.list()).map((w) => w.name)).not.toContain("evil");
    });
  });

  describe("with tokens", () => {
    let served: Served;
    let base: string;
    beforeAll(async () => {
      served = await serve(h);
      base = served.url.replace(/mcp$/, "");
    });
    afterAll(() => served?.stop());

    it("asks for a token once, keeps it in an HttpOnly SameSite=Strict cookie, and signs out", async () => {
      const admin = issue(h, ["--control-plane", "--profile", "admin-rw", "--name", "person"]);
      const { page, problems } = await open(browser, base);
      await page.getByLabel("Token").fill("afs_not_a_token");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("alert").waitFor();
      await page.getByLabel("Token").fill(admin.secret);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("link", { name: "demo" }).waitFor();
      const [cookie] = await page.context().cookies();
      expect(cookie?.httpOnly).toBe(true);
      expect(cookie?.sameSite).toBe("Strict");
      expect(await page.evaluate("document.cookie")).toBe("");
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Token").waitFor();
      // The wrong token's 401 shows in the page, not as an error in the console... but the browser
      // logs every 401 response as a failed resource load.
      expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
      await page.context().close();
    });

    it("scopes a workspace token's session to its workspace and profile", async () => {
      await h.afs.workspaces.create("other");
      const ro = issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]);
      const headers = { Authorization: `Bearer ${ro.secret}`, "Content-Type": "application/json" };
      const session = (await (await fetch(`${base}api/session`, { headers })).json()) as { tools: string[] };
      expect(session).toMatchObject({ profile: "workspace-ro", workspace: "demo", pinned: true });
      expect(session.tools).not.toContain("file_write");
      const write = await fetch(`${base}api/tools/file_write`, {
        method: "POST",
        headers,
        body: JSON.stringify({ path: "/x", content: "x" }),
      });
      expect(write.status).toBe(403);
      const other = await fetch(`${base}api/tools/file_list`, {
        method: "POST",
        headers,
        body: JSON.stringify({ workspace: "other", path: "/" }),
      });
      expect(other.status).toBe(403);
      expect((await fetch(`${base}api/session`)).status).toBe(401);
    });
  });
});
