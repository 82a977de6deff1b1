// The workspaces page and the file browser in a real Chromium on a real `afs serve`: rows with
// agents' text shown as text; create, fork and delete from the page seen through MCP; files at live
// and at a checkpoint; the viewer's numbered, highlighted lines, paged; binary files by size and
// type; a large directory a page at a time; a workspace-ro session; hostile names and contents.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../cli/run.js";
import { connectHttp, issue, type Served, serve } from "../mcp/serve.js";
import { type Home, home } from "../mcp/session.js";
import { launch, open, screenshot } from "./browser.js";

const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
const HOSTILE_NAME = `<img src=x onerror=document.title='pwned'>.txt`;
const JS_NAME = "javascript:alert(1)";
const APP_V1 = 'export function greet(name: string): string {\n  // say hello\n  return "hello " + name;\n}\n';
const APP_V2 = `${APP_V1}\nexport const answer = 42;\n`;
const BIG_LINES = 1200;
/** Over the size the viewer reads whole (128 KiB), so it pages through file_lines. */
const BIG_LINE = `${"x".repeat(200)}\n`;
const MANY = 1200;
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 0xff)]);

/** What `afs` saw as requests to tools, by name, so a test can say which tools a page called. */
function toolCalls(page: Page): string[] {
  const calls: string[] = [];
  page.on("request", (r) => {
    const m = /\/api\/tools\/([a-z_]+)/.exec(r.url());
    if (m?.[1]) calls.push(`${m[1]} ${r.postData() ?? ""}`);
  });
  return calls;
}

describe("console workspaces and files", () => {
  let h: Home;
  let browser: Browser;
  let tmp: string;
  beforeAll(async () => {
    ensureBuilt();
    h = await home();
    await h.afs.workspaces.create("demo", { description: HOSTILE });
    const v = await h.afs.workspaces.volume("demo");
    const put = (path: string, data: string | Buffer) => v.writeFile(path, Buffer.from(data), { op: "write" });
    await put("/src/app.ts", APP_V1);
    await h.afs.checkpoints.create("demo", { name: "cp1" });
    await put("/src/app.ts", APP_V2);
    await put("/logo.png", PNG);
    await put("/big.txt", Array.from({ length: BIG_LINES }, (_, i) => `line ${i + 1} ${BIG_LINE}`).join(""));
    await put(`/${HOSTILE_NAME}`, HOSTILE);
    await put(`/${JS_NAME}`, "not a link\n");
    await put("/evil.html", `${HOSTILE}\n<a href="javascript:document.title='pwned'">x</a>\n`);
    // A directory larger than a page, imported in one step rather than written a file at a time.
    tmp = await mkdtemp(join(tmpdir(), "afs-console-files-"));
    await mkdir(join(tmp, "many"));
    await Promise.all(
      Array.from({ length: MANY }, (_, i) =>
        writeFile(join(tmp, "many", `f${String(i).padStart(5, "0")}.txt`), `${i}`),
      ),
    );
    await h.afs.workspaces.import("big", tmp, { description: "many files" });
    await h.afs.workspaces.setTemplate("big", "starter");
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  describe("with --auth none (admin-rw)", () => {
    let served: Served;
    let base: string;
    beforeAll(async () => {
      served = await serve(h, ["--auth", "none"]);
      base = served.url.replace(/mcp$/, "");
    });
    afterAll(() => served?.stop());

    it("lists workspaces with template, state, last activity and mounts, agents' text as text", async () => {
      const { page, problems } = await open(browser, base);
      const row = page.getByRole("row", { name: /demo/ });
      await row.waitFor();
      expect(await page.getByRole("cell", { name: HOSTILE }).textContent()).toBe(HOSTILE);
      expect(await row.textContent()).toContain("changed");
      expect(await row.textContent()).toContain("by seed");
      const big = page.getByRole("row", { name: /big/ });
      expect(await big.textContent()).toContain("starter");
      expect(await big.textContent()).toContain("clean");
      expect(await page.getByRole("columnheader", { name: /Mounts on/ }).count()).toBe(1);
      expect(await page.title()).not.toContain("pwned");
      expect(await page.locator("main img, main script").count()).toBe(0);
      await screenshot(page, "workspaces");
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("creates, forks (from a checkpoint) and deletes from the page, each seen through MCP", async () => {
      const mcp = await connectHttp(served.url, null);
      const { page, problems } = await open(browser, base);
      await page.getByRole("button", { name: "New workspace" }).click();
      const create = page.getByRole("form", { name: "New workspace" });
      await create.getByLabel("Name").fill("made");
      await create.getByLabel("Description").fill("made in the page");
      await create.getByLabel("Template").selectOption("starter");
      await create.getByRole("button", { name: "Create" }).click();
      await page.getByRole("status").filter({ hasText: "Created workspace made." }).waitFor();
      await page.getByRole("link", { name: "made", exact: true }).waitFor();
      const made = await mcp.ok<{ workspaces: { name: string; description: string }[] }>("workspace_list");
      expect(made.workspaces.find((w) => w.name === "made")?.description).toBe("made in the page");
      expect(await mcp.ok("file_list", { workspace: "made", path: "/many", limit: 1 })).toMatchObject({
        truncated: true,
      });

      await page.getByRole("button", { name: "Fork demo" }).click();
      const fork = page.getByRole("form", { name: "Fork demo" });
      await fork.getByLabel("New workspace name").fill("then");
      await fork.getByLabel("Start from").selectOption("cp1");
      await fork.getByRole("button", { name: "Fork" }).click();
      await page.getByRole("link", { name: "then", exact: true }).waitFor();
      expect(await mcp.ok("file_read", { workspace: "then", path: "/src/app.ts" })).toMatchObject({ content: APP_V1 });

      await page.getByRole("button", { name: "Delete made" }).click();
      const del = page.getByRole("form", { name: "Delete made" });
      const confirm = del.getByRole("button", { name: "Delete for good" });
      expect(await confirm.isDisabled()).toBe(true);
      await del.getByLabel("Workspace name").fill("mad");
      expect(await confirm.isDisabled()).toBe(true);
      await del.getByLabel("Workspace name").fill("made");
      await confirm.click();
      await page.getByRole("status").filter({ hasText: "Deleted workspace made." }).waitFor();
      await page.getByRole("link", { name: "made", exact: true }).waitFor({ state: "detached" });
      const after = await mcp.ok<{ workspaces: { name: string }[] }>("workspace_list");
      expect(after.workspaces.map((w) => w.name)).not.toContain("made");
      expect(problems).toEqual([]);
      await mcp.close();
      await page.context().close();
    });

    it("browses live and at a checkpoint, with breadcrumbs and a picker that keeps the path", async () => {
      const { page, problems } = await open(browser, `${base}ws/demo`);
      await page.getByRole("link", { name: "src/" }).click();
      await page.getByRole("link", { name: "app.ts" }).click();
      const viewer = page.getByRole("region", { name: "File app.ts" });
      await viewer.getByText("export const answer = 42;").waitFor();
      expect(page.url()).toBe(`${base}ws/demo/files/src/app.ts`);
      await page.getByLabel("Show").selectOption("cp1");
      await page.waitForURL(`${base}ws/demo/files/src/app.ts?at=cp1`);
      await viewer.getByText('return "hello " + name;').waitFor();
      expect(await viewer.getByText("export const answer = 42;").count()).toBe(0);
      // The breadcrumbs keep the checkpoint: the parent directory at cp1 has no big.txt.
      await page.getByRole("navigation", { name: "Path" }).getByRole("link", { name: "demo" }).click();
      await page.waitForURL(`${base}ws/demo/files/?at=cp1`);
      await page.getByRole("link", { name: "src/" }).waitFor();
      expect(await page.getByRole("link", { name: "big.txt" }).count()).toBe(0);
      await page.getByLabel("Show").selectOption("");
      await page.getByRole("link", { name: "big.txt" }).waitFor();
      await screenshot(page, "files");
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("numbers and highlights lines; a deep link to a line marks it", async () => {
      const { page, problems } = await open(browser, `${base}ws/demo/files/src/app.ts?line=3`);
      const viewer = page.getByRole("region", { name: "File app.ts" });
      await viewer.locator(".hljs-keyword").first().waitFor();
      const numbers = await viewer.locator("td.ln").allTextContents();
      expect(numbers).toEqual(["1", "2", "3", "4", "5", "6"]);
      expect(await viewer.locator(".hljs-comment").first().textContent()).toBe("// say hello");
      expect(await viewer.locator("tr.target td.code").textContent()).toBe('  return "hello " + name;');
      expect(await viewer.getByRole("link", { name: "History" }).getAttribute("href")).toBe(
        "/ws/demo/history/src/app.ts",
      );
      await screenshot(page, "viewer");
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("reads in dark mode and at 200% zoom (half the width) without sideways scrolling", async () => {
      const { page, problems } = await open(browser, `${base}ws/demo/files/src/app.ts`, { colorScheme: "dark" });
      await page.locator(".hljs-keyword").first().waitFor();
      // Expressions as strings: the tests are type-checked without the DOM's types.
      expect(await page.evaluate("getComputedStyle(document.body).backgroundColor")).toBe("rgb(15, 18, 22)");
      await screenshot(page, "viewer-dark");
      await page.setViewportSize({ width: 640, height: 720 });
      for (const path of ["", "ws/demo", "ws/demo/files/src/app.ts"]) {
        await page.goto(`${base}${path}`);
        await page.locator("main h1").first().waitFor();
        await page.waitForLoadState("networkidle");
        const overflow = await page.evaluate(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        expect(overflow, path).toBeLessThanOrEqual(0);
      }
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("shows a binary file by size and type only", async () => {
      const { page, problems } = await open(browser, `${base}ws/demo/files/logo.png`);
      const note = page.locator(".viewer-binary");
      await note.waitFor();
      expect(await note.textContent()).toContain("PNG image");
      expect(await note.textContent()).toContain(`${PNG.length} bytes`);
      expect(await page.locator("td.code").count()).toBe(0);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("pages a large file through file_lines and never reads it whole", async () => {
      const { page, problems } = await open(browser, base);
      const calls = toolCalls(page);
      await page.goto(`${base}ws/demo/files/big.txt`);
      await page.getByText(`Lines 1–500 of ${BIG_LINES}`).first().waitFor();
      expect(await page.locator("td.ln").count()).toBe(500);
      await page.getByRole("button", { name: "Next 500" }).first().click();
      await page.getByText(`Lines 501–1000 of ${BIG_LINES}`).first().waitFor();
      expect(await page.locator("td.ln").first().textContent()).toBe("501");
      await page.getByLabel("Go to line").first().fill("1150");
      await page.getByLabel("Go to line").first().press("Enter");
      await page.getByText(`Lines 1001–${BIG_LINES} of ${BIG_LINES}`).first().waitFor();
      expect(calls.filter((c) => c.startsWith("file_read "))).toEqual([]);
      expect(calls.filter((c) => c.startsWith("file_lines ")).length).toBeGreaterThanOrEqual(3);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("lists a directory larger than a page a page at a time", async () => {
      const { page, problems } = await open(browser, `${base}ws/big/files/many`);
      await page.getByText("Entries 1–500, more follow").first().waitFor();
      expect(await page.locator("table.files-list tbody tr").count()).toBe(500);
      await page.getByRole("button", { name: "Next 500" }).first().click();
      await page.getByRole("link", { name: "f00500.txt" }).waitFor();
      await page.getByRole("button", { name: "Next 500" }).first().click();
      await page.getByText("Entries 1001–1200").first().waitFor();
      expect(await page.getByRole("button", { name: "Next 500" }).count()).toBe(0);
      await page.getByRole("button", { name: "Previous 500" }).first().click();
      await page.getByText("Entries 501–1000, more follow").first().waitFor();
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it("shows hostile file names and contents as text and runs none of them", async () => {
      const { page, problems } = await open(browser, `${base}ws/demo`);
      const hostile = page.getByRole("link", { name: HOSTILE_NAME });
      await hostile.waitFor();
      expect(await hostile.getAttribute("href")).toBe(`/ws/demo/files/${encodeURIComponent(HOSTILE_NAME)}`);
      const js = page.getByRole("link", { name: JS_NAME });
      expect(await js.getAttribute("href")).toBe(`/ws/demo/files/${encodeURIComponent(JS_NAME)}`);
      await js.click();
      await page.getByText("not a link").waitFor();
      await page.goBack();
      await page.getByRole("link", { name: HOSTILE_NAME }).click();
      await page
        .getByRole("region", { name: `File ${HOSTILE_NAME}` })
        .getByText(HOSTILE)
        .waitFor();
      await page.goto(`${base}ws/demo/files/evil.html`);
      const viewer = page.getByRole("region", { name: "File evil.html" });
      await viewer.locator(".hljs-tag").first().waitFor();
      expect(await viewer.locator("td.code").first().textContent()).toBe(HOSTILE);
      expect(await page.locator("main img, main script, main td.code a").count()).toBe(0);
      expect(await page.title()).not.toContain("pwned");
      expect(problems).toEqual([]);
      await page.context().close();
    });
  });

  describe("with a workspace-ro token", () => {
    let served: Served;
    let base: string;
    beforeAll(async () => {
      served = await serve(h);
      base = served.url.replace(/mcp$/, "");
    });
    afterAll(() => served?.stop());

    it("sees its one workspace, reads files at a linked checkpoint, and has no buttons that change anything", async () => {
      const ro = issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]);
      const { page, problems } = await open(browser, base);
      await page.getByLabel("Token").fill(ro.secret);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("link", { name: "demo", exact: true }).waitFor();
      expect(await page.getByRole("link", { name: "big" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "New workspace" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^(Fork|Delete)/ }).count()).toBe(0);
      await page.getByRole("link", { name: "demo", exact: true }).click();
      await page.getByRole("link", { name: "big.txt" }).waitFor();
      await page.goto(`${base}ws/demo/files/src/app.ts?at=cp1`);
      await page.getByText("at checkpoint cp1").waitFor();
      await page.getByText('return "hello " + name;').waitFor();
      expect(await page.getByText("export const answer = 42;").count()).toBe(0);
      // Before signing in, the session's 401 is logged by the browser as a failed resource load.
      expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
      await page.context().close();
    });
  });
});
