// The checkpoints, diff and history pages in a real Chromium on a real `afs serve`: what the page
// does is checked through MCP, agents' text (descriptions, file names, contents) stays text, and a
// read-only token is offered no button that changes anything.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../cli/run.js";
import { connectHttp, issue, type Served, serve } from "../mcp/serve.js";
import { type Home, home, type Session } from "../mcp/session.js";
import { launch, open, screenshot } from "./browser.js";

const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;
const HOSTILE_NAME = `/<img src=x onerror=alert(1)>.txt`;
const LINK_NAME = "/javascript:alert(1)";

interface Listed {
  head: string;
  dirty: boolean;
  checkpoints: { name: string; kind: string; description: string }[];
}

/** Nothing agents wrote ran: no title change, no image element, no dialog (open() records dialogs). */
async function executedNothing(page: Page): Promise<void> {
  expect(await page.title()).not.toContain("pwned");
  expect(await page.locator("main img").count()).toBe(0);
  expect(await page.locator("main script").count()).toBe(0);
}

describe("console checkpoints, diff and history", () => {
  let h: Home;
  let browser: Browser;
  let served: Served;
  let base: string;
  let mcp: Session;

  beforeAll(async () => {
    ensureBuilt();
    h = await home();
    await h.afs.workspaces.create("demo");
    served = await serve(h, ["--auth", "none"]);
    base = served.url.replace(/mcp$/, "");
    mcp = await connectHttp(served.url, null);
    const w = { workspace: "demo" };
    await mcp.ok("file_write", { ...w, path: "/a.txt", content: "alpha\nbeta\ngamma\n" });
    await mcp.ok("file_write", { ...w, path: HOSTILE_NAME, content: "harmless\n" });
    await mcp.ok("file_write", { ...w, path: LINK_NAME, content: "x\n" });
    await mcp.ok("checkpoint_create", { ...w, checkpoint: "v1", description: HOSTILE });
    await mcp.ok("file_write", { ...w, path: "/a.txt", content: "alpha\nBETA\ngamma\ndelta\n" });
    await mcp.ok("file_write", { ...w, path: HOSTILE_NAME, content: `${HOSTILE}\n` });
    await mcp.ok("file_write", { ...w, path: "/b.txt", content: "new file\n" });
    await mcp.ok("checkpoint_create", { ...w, checkpoint: "v2", description: "second" });
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await browser?.close();
    await served?.stop();
    await h?.cleanup();
  });

  it("shows the timeline with agents' descriptions as text and creates a checkpoint seen through MCP", async () => {
    await mcp.ok("file_write", { workspace: "demo", path: "/c.txt", content: "for the page's checkpoint\n" });
    const { page, problems } = await open(browser, `${base}ws/demo/checkpoints`);
    const cell = page.getByRole("cell", { name: HOSTILE });
    await cell.waitFor();
    expect(await cell.textContent()).toBe(HOSTILE);
    const v2 = page.getByRole("row").filter({ hasText: "second" });
    // v2 changed /a.txt, the hostile file and added /b.txt: three paths against v1.
    expect(await v2.getByRole("cell").nth(6).textContent()).toBe("3");
    expect(await v2.getByRole("link", { name: "3" }).getAttribute("href")).toBe("/ws/demo/diff?from=v1&to=v2");
    await executedNothing(page);

    await page.getByLabel("Name").fill("from-page");
    await page.getByLabel("Description").fill(HOSTILE);
    await page.getByRole("button", { name: "Create checkpoint" }).click();
    await page.getByRole("status").filter({ hasText: "Created checkpoint from-page." }).waitFor();
    const listed = await mcp.ok<Listed>("checkpoint_list", { workspace: "demo" });
    expect(listed.head).toBe("from-page");
    expect(listed.checkpoints.find((c) => c.name === "from-page")).toMatchObject({
      kind: "manual",
      description: HOSTILE,
    });
    await page.getByRole("cell", { name: "from-page" }).first().waitFor();
    await executedNothing(page);
    await screenshot(page, "checkpoints");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("compares two picked checkpoints: the diff page shows the right hunks, unified and side by side", async () => {
    const { page, problems } = await open(browser, `${base}ws/demo/checkpoints`);
    await page.getByLabel("Compare v2").check();
    await page.getByLabel("Compare v1").check();
    await page.getByRole("button", { name: "Compare selected" }).click();
    await page.waitForURL(/\/ws\/demo\/diff\?from=v1&to=v2$/);
    await page.getByText("1 added").waitFor();
    expect(await page.getByText("2 modified").count()).toBe(1);

    const a = page.getByRole("region", { name: "/a.txt" });
    expect(await a.locator("tr.del td.code").allTextContents()).toEqual(["-beta"]);
    expect(await a.locator("tr.add td.code").allTextContents()).toEqual(["+BETA", "+delta"]);
    const hostile = page.getByRole("region", { name: HOSTILE_NAME });
    expect(await hostile.locator("h3").textContent()).toContain(HOSTILE_NAME);
    expect(await hostile.locator("tr.add td.code").allTextContents()).toEqual([`+${HOSTILE}`]);
    // An added file's lines, as git shows them.
    const added = page.getByRole("region", { name: "/b.txt" });
    expect(await added.locator("tr.add td.code").allTextContents()).toEqual(["+new file"]);
    expect(await added.locator("tr.hunk").textContent()).toBe("@@ -0,0 +1,1 @@");
    await executedNothing(page);

    await page.getByLabel("Side by side").check();
    await page.waitForURL(/view=split/);
    expect(await a.locator("td.code.del").allTextContents()).toEqual(["-beta"]);
    expect(await a.locator("td.code.add").allTextContents()).toEqual(["+BETA", "+delta"]);
    // The mode is in the address: a reload keeps it.
    await page.reload();
    await page.getByRole("region", { name: "/a.txt" }).locator("td.code.del").waitFor();
    expect(await page.getByLabel("Side by side").isChecked()).toBe(true);
    await screenshot(page, "diff");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("draws a long diff in batches as the reader scrolls, every page of changes in the end", async () => {
    await h.afs.workspaces.create("many");
    const volume = await h.afs.workspaces.volume("many");
    const FILES = 250;
    const name = (i: number) => `/d/f${String(i).padStart(3, "0")}.txt`;
    for (let i = 0; i < FILES; i++) await volume.writeFile(name(i), Buffer.from(`keep\nold ${i}\n`), { op: "write" });
    await h.afs.checkpoints.create("many", { name: "before" });
    for (let i = 0; i < FILES; i++) await volume.writeFile(name(i), Buffer.from(`keep\nnew ${i}\n`), { op: "write" });
    await h.afs.checkpoints.create("many", { name: "after" });

    const { page, problems } = await open(browser, `${base}ws/many/diff?from=before&to=after`);
    await page.getByText(`${FILES} modified`).waitFor();
    const drawn = page.locator(".file-change");
    await drawn.first().waitFor();
    // Not all at once: of the first page of 100 changes, the page draws only what is near the
    // window, and asks for the next pages on the way down.
    await page.waitForTimeout(500);
    expect(await drawn.count()).toBeLessThan(100);
    const last = page.getByRole("region", { name: name(FILES - 1) });
    while ((await last.count()) === 0) {
      await page.mouse.wheel(0, 10_000);
      await page.waitForTimeout(50);
    }
    expect(await drawn.count()).toBe(FILES);
    expect(await last.locator("tr.del td.code").allTextContents()).toEqual([`-old ${FILES - 1}`]);
    expect(await last.locator("tr.add td.code").allTextContents()).toEqual([`+new ${FILES - 1}`]);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("restores with a preview of its changes, seen through MCP, and undoes it", async () => {
    await mcp.ok("file_write", { workspace: "demo", path: "/live.txt", content: "not checkpointed\n" });
    const { page, problems } = await open(browser, `${base}ws/demo/checkpoints`);
    await page.getByRole("button", { name: "Restore v1…" }).click();
    const preview = page.getByRole("region", { name: "Restore v1" });
    await preview.getByText("safety checkpoint").first().waitFor();
    const live = preview.getByRole("region", { name: "/live.txt" });
    await live.waitFor();
    expect(await live.locator(".badge").textContent()).toBe("deleted");
    const a = preview.getByRole("region", { name: "/a.txt" });
    expect(await a.locator("tr.del td.code").allTextContents()).toEqual(["-BETA", "-delta"]);
    expect(await a.locator("tr.add td.code").allTextContents()).toEqual(["+beta"]);

    await preview.getByRole("button", { name: "Restore v1" }).click();
    const done = page.getByRole("status").filter({ hasText: "Restored v1." });
    await done.waitFor();
    const after = await mcp.ok<Listed>("checkpoint_list", { workspace: "demo" });
    expect(after).toMatchObject({ head: "v1", dirty: false });
    const safety = after.checkpoints.find((c) => c.kind === "safety")?.name as string;
    expect(safety).toMatch(/^safety-/);
    expect(await done.textContent()).toContain(`saved as checkpoint ${safety}`);
    expect((await mcp.fail("file_read", { workspace: "demo", path: "/live.txt" })).code).toBe("NOT_FOUND");
    expect((await mcp.ok("file_read", { workspace: "demo", path: "/a.txt" })).content).toBe("alpha\nbeta\ngamma\n");

    await page.getByRole("button", { name: "Undo restore" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `Undone: the live state is ${safety} again.` })
      .waitFor();
    expect((await mcp.ok("file_read", { workspace: "demo", path: "/live.txt" })).content).toBe("not checkpointed\n");
    expect((await mcp.ok("file_read", { workspace: "demo", path: "/a.txt" })).content).toBe(
      "alpha\nBETA\ngamma\ndelta\n",
    );
    expect((await mcp.ok<Listed>("checkpoint_list", { workspace: "demo" })).head).toBe(safety);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("history: diffs two versions, views one, restores one and undeletes a deleted file", async () => {
    const w = { workspace: "demo" };
    for (const text of ["one\n", "two\n", "three\n"])
      await mcp.ok("file_write", { ...w, path: "/notes.md", content: text });
    const { page, problems } = await open(browser, `${base}ws/demo/history/notes.md`);
    const ids = (
      await mcp.ok<{ versions: { version_id: string }[] }>("file_history", { ...w, path: "/notes.md" })
    ).versions.map((v) => v.version_id);
    const [three, , one] = ids as [string, string, string];
    await page.getByLabel(`Compare ${one}`).check();
    await page.getByLabel(`Compare ${three}`).check();
    await page.getByRole("button", { name: "Compare selected" }).click();
    const diff = page.getByRole("region", { name: "Version diff" });
    await diff.locator("tr.del").first().waitFor();
    expect(await diff.locator("tr.del td.code").allTextContents()).toEqual(["-one"]);
    expect(await diff.locator("tr.add td.code").allTextContents()).toEqual(["+three"]);

    await page.getByRole("button", { name: `View ${one}` }).click();
    expect(
      await page
        .getByRole("region", { name: `Version ${one}` })
        .locator("pre")
        .textContent(),
    ).toBe("one\n");
    await screenshot(page, "history");

    await page.getByRole("button", { name: `Restore ${one}` }).click();
    await page.getByRole("status").filter({ hasText: "Restored /notes.md" }).waitFor();
    expect((await mcp.ok("file_read", { ...w, path: "/notes.md" })).content).toBe("one\n");

    await mcp.ok("file_write", { ...w, path: "/gone.md", content: "come back\n" });
    await mcp.ok("file_delete", { ...w, path: "/gone.md" });
    await page.goto(`${base}ws/demo/history/gone.md`);
    await page.getByRole("button", { name: "Undelete" }).click();
    await page.getByRole("status").filter({ hasText: "Undeleted /gone.md" }).waitFor();
    expect((await mcp.ok("file_read", { ...w, path: "/gone.md" })).content).toBe("come back\n");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("a hostile file's history page and a javascript: name render as text and run nothing", async () => {
    const { page, problems } = await open(browser, `${base}ws/demo/diff?from=v1&to=v2`);
    const link = page.getByRole("region", { name: HOSTILE_NAME }).getByRole("link", { name: "history" });
    await link.click();
    await page.getByRole("heading", { name: `History of ${HOSTILE_NAME}` }).waitFor();
    await page.getByRole("cell", { name: "v2" }).first().waitFor();
    await executedNothing(page);
    await page.goto(`${base}ws/demo/history${encodeURI(LINK_NAME)}`);
    await page.getByRole("heading", { name: `History of ${LINK_NAME}` }).waitFor();
    for (const href of await page.locator("main a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))) {
      expect(href?.startsWith("/")).toBe(true);
    }
    await executedNothing(page);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  describe("with a workspace-ro token", () => {
    let tokens: Served;
    beforeAll(async () => {
      tokens = await serve(h);
    });
    afterAll(() => tokens?.stop());

    /** Signs in with `secret` at `path` in a fresh context. */
    async function signedIn(secret: string, path: string) {
      const opened = await open(browser, `${tokens.url.replace(/mcp$/, "")}${path}`);
      await opened.page.getByLabel("Token").fill(secret);
      await opened.page.getByRole("button", { name: "Sign in" }).click();
      return opened;
    }

    it("workspace-ro: the history without restore or undelete, checkpoints not offered", async () => {
      await mcp.ok("file_delete", { workspace: "demo", path: "/gone.md" });
      const ro = issue(h, ["--workspace", "demo", "--profile", "workspace-ro"]);
      const url = tokens.url.replace(/mcp$/, "");
      const { page, problems } = await signedIn(ro.secret, "ws/demo/checkpoints");
      await page.getByText("This session's profile (workspace-ro) may not read checkpoints.").waitFor();
      expect(await page.getByRole("button", { name: "Create checkpoint" }).count()).toBe(0);

      await page.goto(`${url}ws/demo/history/notes.md`);
      await page
        .getByRole("button", { name: /^View / })
        .first()
        .waitFor();
      expect(await page.getByRole("button", { name: /^Restore / }).count()).toBe(0);
      await page.goto(`${url}ws/demo/history/gone.md`);
      await page.getByText("This file is deleted.").waitFor();
      expect(await page.getByRole("button", { name: "Undelete" }).count()).toBe(0);
      // The sign-in page's 401 for the session is a failed load in the browser's eyes.
      expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
      await page.context().close();
    });

    it("admin-ro: the timeline, but no create, restore or compare", async () => {
      const ro = issue(h, ["--control-plane", "--profile", "admin-ro"]);
      const { page, problems } = await signedIn(ro.secret, "ws/demo/checkpoints");
      await page.getByRole("cell", { name: "v1" }).first().waitFor();
      expect(await page.getByRole("button", { name: "Create checkpoint" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^Restore/ }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Compare selected" }).count()).toBe(0);
      expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
      await page.context().close();
    });
  });
});
