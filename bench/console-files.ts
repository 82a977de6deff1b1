// The console's first screens in a real Chromium on a real `afs serve`: time to first render of
// `/` (20 workspaces) and of a directory holding 100,000 files (its first page of 500 rows), the
// median of 5 cold loads each (a fresh browser context: no cache, no cookies), the next page of
// that directory, file_list's page latency itself, and the bytes a first load transfers
// (compressed, as the browser received them).
// Run: node --import tsx bench/console-files.ts [FILES]   (default 100000; needs /usr/bin/chromium)
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { Afs } from "../src/workspace/afs.js";
import { CHROMIUM } from "../test/console/browser.js";
import {
  emitJson,
  fmtBytes,
  fmtMs,
  isMain,
  makeTempDir,
  median,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  startServe,
} from "./lib.js";

const RUNS = 5;
const WORKSPACES = 20;
const CLI = join(REPO_ROOT, "dist", "cli", "main.js");

/** A cold load of `url` in a fresh context: ms from navigation start until `ready` shows, and bytes received. */
async function coldLoad(browser: Browser, url: string, ready: (page: Page) => Promise<void>) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const sizes: Promise<number>[] = [];
  page.on("requestfinished", (r) => sizes.push(r.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
  await page.goto(url);
  await ready(page);
  const ms = await page.evaluate(() => performance.now());
  const bytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  return { ms, bytes, page, context };
}

export async function main(files = 100_000): Promise<void> {
  // tmpfs when there is one: the files written to import are many and small.
  const work = existsSync("/dev/shm")
    ? await mkdtemp("/dev/shm/afs-console-bench-")
    : await makeTempDir("afs-console-bench-");
  const home = join(work, "home");
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  let browser: Browser | undefined;
  try {
    const afs = await Afs.open({ home, actor: "bench" });
    for (let i = 0; i < WORKSPACES; i++) {
      await afs.workspaces.create(`ws-${String(i).padStart(2, "0")}`, { description: `workspace ${i}` });
      const v = await afs.workspaces.volume(`ws-${String(i).padStart(2, "0")}`);
      await v.writeFile("/README.md", Buffer.from(`# workspace ${i}\n`), { op: "write" });
    }
    const dir = join(work, "files");
    mkdirSync(join(dir, "big"), { recursive: true });
    for (let i = 0; i < files; i++) writeFileSync(join(dir, "big", `f${String(i).padStart(6, "0")}.txt`), `${i}\n`);
    await afs.workspaces.import("big", dir);
    await removeDir(dir);
    await afs.close();

    serve = await startServe(CLI, { ...process.env, AFS_HOME: home }, ["--auth", "none"]);
    const base = serve.url.replace(/mcp$/, "");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });

    // file_list's own page latency, as the page calls it (the first page, and one deep in the directory).
    const list = async (body: Record<string, unknown>) => {
      const t = performance.now();
      const res = await fetch(`${base}api/tools/file_list`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: base.replace(/\/$/, "") },
        body: JSON.stringify({ workspace: "big", path: "/big", limit: 500, ...body }),
      });
      const data = (await res.json()) as { cursor?: string };
      return { ms: performance.now() - t, cursor: data.cursor };
    };
    const firstPage: number[] = [];
    const deepPage: number[] = [];
    let deep: string | undefined;
    for (let i = 0; i < RUNS; i++) {
      const r = await list({});
      firstPage.push(r.ms);
      if (!deep) {
        // A cursor halfway down: walk pages of 1000 (the session's cap) to get there once.
        let c = r.cursor;
        for (let skipped = 500; skipped < files / 2 && c; skipped += 1000)
          c = (await list({ cursor: c, limit: 1000 })).cursor;
        deep = c;
      }
      if (deep) deepPage.push((await list({ cursor: deep })).ms);
    }

    const home1: number[] = [];
    const homeBytes: number[] = [];
    const dir1: number[] = [];
    const next: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const h = await coldLoad(browser, base, (p) => p.getByRole("link", { name: "ws-19" }).waitFor());
      home1.push(h.ms);
      homeBytes.push(h.bytes);
      await h.context.close();
      const d = await coldLoad(browser, `${base}ws/big/files/big`, (p) =>
        p.getByText("Entries 1–500, more follow").first().waitFor(),
      );
      dir1.push(d.ms);
      const t = performance.now();
      await d.page.getByRole("button", { name: "Next 500" }).first().click();
      await d.page.getByRole("link", { name: "f000500.txt" }).waitFor();
      next.push(performance.now() - t);
      await d.context.close();
    }

    const rows: [string, number][] = [
      ["first render of / (ms)", median(home1)],
      [`first render of a ${files.toLocaleString("en")}-file directory (ms)`, median(dir1)],
      ["its next page of 500 (ms)", median(next)],
      ["file_list first page of 500 over HTTP (ms)", median(firstPage)],
      ["file_list page halfway down (ms)", median(deepPage)],
    ];
    printTable(
      "Console: first render in Chromium, cold",
      ["what", `median of ${RUNS}`],
      [
        ...rows.map(([what, ms]) => [what, fmtMs(ms)]),
        ["bytes on first load of / (compressed)", fmtBytes(median(homeBytes))],
      ],
    );
    emitJson("console-files", {
      files,
      workspaces: WORKSPACES,
      runs: RUNS,
      home_first_render_ms: round(median(home1)),
      dir_first_render_ms: round(median(dir1)),
      dir_next_page_ms: round(median(next)),
      file_list_first_page_ms: round(median(firstPage)),
      file_list_deep_page_ms: round(median(deepPage)),
      first_load_bytes: median(homeBytes),
    });
  } finally {
    await browser?.close();
    serve?.child.kill("SIGTERM");
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const files = Number.parseInt(process.argv[2] ?? "", 10);
  await main(Number.isFinite(files) && files > 0 ? files : undefined);
}
