// The console's diff page in Chromium on a 1,000-file diff (every file modified, a few lines
// each): time from navigation to the summary on screen and to the first file's hunks (the first
// render), then to every file drawn while scrolling to the end, and the longest main-thread task
// meanwhile. Median of 5 page loads, each in a fresh browser context (no cache).
// Run: node --import tsx bench/console-diff.ts [FILES] [RUNS]   (default 1000 5; needs npm run build)
import { join } from "node:path";
import { chromium } from "playwright-core";
import { Afs } from "../src/workspace/afs.js";
import { CHROMIUM } from "../test/console/browser.js";
import {
  emitJson,
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

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const WS = "bench";

/** A 40-line text; `round` changes every tenth line. */
const text = (file: number, round: number): string =>
  Array.from({ length: 40 }, (_, i) =>
    i % 10 === 3 ? `line ${i} of file ${file}, round ${round}` : `line ${i} of file ${file}`,
  ).join("\n");

async function seed(home: string, files: number): Promise<void> {
  const afs = await Afs.open({ home, actor: "bench" });
  try {
    await afs.workspaces.create(WS);
    const volume = await afs.workspaces.volume(WS);
    const write = async (round: number) => {
      for (let i = 0; i < files; i++) {
        const path = `/src/d${i % 20}/file${i}.txt`;
        await volume.writeFile(path, Buffer.from(text(i, round)), { op: "write" });
      }
    };
    await write(1);
    await afs.checkpoints.create(WS, { name: "v1" });
    await write(2);
    await afs.checkpoints.create(WS, { name: "v2" });
  } finally {
    await afs.close();
  }
}

interface Run {
  summary: number;
  firstHunks: number;
  allFiles: number;
  longestTask: number;
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const files = Number(argv[0] ?? 1000);
  const runs = Number(argv[1] ?? 5);
  const work = await makeTempDir("afs-bench-console-diff-");
  const home = join(work, "home");
  await seed(home, files);
  const served = await startServe(CLI, { ...process.env, AFS_HOME: home }, ["--auth", "none"]);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const url = `${served.url.replace(/mcp$/, "")}ws/${WS}/diff?from=v1&to=v2`;
  const results: Run[] = [];
  try {
    for (let r = 0; r < runs; r++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      // Long tasks (over 50 ms on the main thread) from the first byte on.
      // (Browser code as text: this file is type-checked against Node's globals, not the DOM's.)
      await page.addInitScript({
        content: `window.__longest = 0;
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
          }).observe({ type: "longtask", buffered: true });`,
      });
      await page.goto(url, { waitUntil: "commit" });
      await page.locator(".diff-summary").waitFor();
      const summary = await page.evaluate(() => performance.now());
      await page.locator(".file-change table.patch").first().waitFor();
      const firstHunks = await page.evaluate(() => performance.now());
      // Scroll to the end until the last file is drawn.
      const last = page.locator(".file-change").nth(files - 1);
      while ((await last.count()) === 0) {
        await page.mouse.wheel(0, 20_000);
        await page.waitForTimeout(20);
      }
      const allFiles = await page.evaluate(() => performance.now());
      const longestTask = (await page.evaluate("window.__longest")) as number;
      results.push({ summary, firstHunks, allFiles, longestTask });
      await context.close();
    }
  } finally {
    await browser.close();
    served.child.kill("SIGTERM");
    await removeDir(work);
  }
  const med = (k: keyof Run) => median(results.map((x) => x[k]));
  printTable(
    `console diff page, ${files} modified files, median of ${runs} (ms since navigation start)`,
    ["measure", "median ms", "min ms", "max ms"],
    (["summary", "firstHunks", "allFiles", "longestTask"] as const).map((k) => [
      k === "summary"
        ? "summary on screen"
        : k === "firstHunks"
          ? "first hunks on screen (first render)"
          : k === "allFiles"
            ? `all ${files} files drawn (scrolling)`
            : "longest main-thread task",
      fmtMs(med(k)),
      fmtMs(Math.min(...results.map((x) => x[k]))),
      fmtMs(Math.max(...results.map((x) => x[k]))),
    ]),
  );
  emitJson("console-diff", {
    files,
    runs,
    summary_ms: round(med("summary")),
    first_render_ms: round(med("firstHunks")),
    all_files_ms: round(med("allFiles")),
    longest_task_ms: round(med("longestTask")),
  });
}

if (isMain(import.meta.url)) await main();
