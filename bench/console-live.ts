// The console's live activity in a real Chromium (Debian's, through playwright-core) on `afs serve
// --auth none`: how long after an MCP write (file_write over HTTP) its row is on screen, on
// /activity (every workspace) and /ws/NAME/activity, and the time to first render of /activity
// (navigation start to the first row drawn with the stream live), over a log of a few hundred
// changes in several workspaces. The row's time is taken in the page on the animation frame after
// the row entered the DOM; the write's in this process; both on the one machine clock.
// Run: npm run build && node --import tsx bench/console-live.ts [WRITES]
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Browser, chromium, type Page } from "playwright-core";
import {
  emitJson,
  fmtMs,
  isMain,
  makeTempDir,
  printTable,
  REPO_ROOT,
  removeDir,
  round,
  startServe,
  summarize,
} from "./lib.js";

const CLI = process.env.AFS_BENCH_CLI ?? join(REPO_ROOT, "dist/cli/main.js");
const CHROMIUM = process.env.AFS_CHROMIUM ?? "/usr/bin/chromium";
const WORKSPACES = ["bench", "two", "three"];
/** Changes in each workspace's log before the page opens (the history /activity reads first). */
const SEEDED = 100;
const RENDERS = 5;

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Records, in the page, when each activity row linking to a path under /lat/ is first drawn. As
 * source text: tsx would wrap a function's inner names in a helper the page does not have.
 */
const WATCH_ROWS = `(() => {
  const seen = {};
  window.latSeen = seen;
  new MutationObserver(() => {
    for (const a of document.querySelectorAll("table.activity-log a")) {
      const path = a.textContent || "";
      if (!path.startsWith("/lat/") || path in seen) continue;
      seen[path] = 0;
      requestAnimationFrame(() => { seen[path] = performance.timeOrigin + performance.now(); });
    }
  }).observe(document.body, { childList: true, subtree: true });
})()`;

const watchRows = (page: Page): Promise<void> => page.evaluate(WATCH_ROWS);

async function drawnAt(page: Page, path: string): Promise<number> {
  // Page-side code: typed through globalThis, as this file is checked without the DOM's types
  // (and not as text, which the page's CSP would refuse to evaluate).
  const handle = await page.waitForFunction(
    (p) => (globalThis as unknown as { latSeen: Record<string, number> }).latSeen[p] || null,
    path,
    { timeout: 10_000, polling: 5 },
  );
  return (await handle.jsonValue()) as number;
}

interface Latency {
  page: string;
  /** From calling file_write to the row drawn. */
  fromCall: number[];
  /** From file_write's answer to the row drawn. */
  fromAnswer: number[];
}

async function latency(browser: Browser, base: string, mcp: Client, path: string, writes: number): Promise<Latency> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}${path}`);
  await page.locator(".live-state.live").waitFor();
  await page.locator("table.activity-log tbody tr").first().waitFor();
  await watchRows(page);
  const result: Latency = { page: path, fromCall: [], fromAnswer: [] };
  const tag = path.replace(/\W+/g, "_");
  for (let i = 0; i < writes; i++) {
    const file = `/lat/${tag}-${i}.txt`;
    const called = now();
    await mcp.callTool({ name: "file_write", arguments: { workspace: "bench", path: file, content: `${i}\n` } });
    const answered = now();
    const drawn = await drawnAt(page, file);
    result.fromCall.push(drawn - called);
    result.fromAnswer.push(drawn - answered);
    // Apart, as an agent's writes usually are: each one is a fresh change for the followers to see.
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.context().close();
  return result;
}

/** Navigation start to the first row drawn with the stream live, in a fresh context each time. */
async function firstRender(browser: Browser, base: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < RENDERS; i++) {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${base}activity`, { waitUntil: "commit" });
    const at = await page.waitForFunction(
      () => {
        const d = (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document;
        return d.querySelector(".live-state.live") && d.querySelector("table.activity-log tbody tr")
          ? performance.now()
          : null;
      },
      undefined,
      { polling: "raf", timeout: 10_000 },
    );
    samples.push((await at.jsonValue()) as number);
    await page.context().close();
  }
  return samples;
}

export async function main(writes = 20): Promise<void> {
  const dir = await makeTempDir("afs-bench-console-");
  const env = { ...process.env, AFS_HOME: join(dir, "home"), AFS_ACTOR: "bench" };
  const run = (args: string[], input = "") => {
    const r = spawnSync(process.execPath, [CLI, ...args], { env, input });
    if (r.status !== 0) throw new Error(`afs ${args.join(" ")}: ${r.stderr}`);
  };
  let browser: Browser | undefined;
  let served: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    for (const ws of WORKSPACES) run(["ws", "create", ws]);
    served = await startServe(CLI, env, ["--auth", "none"]);
    const base = served.url.replace(/mcp$/, "");
    const mcp = new Client({ name: "afs-bench", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    for (const ws of WORKSPACES) {
      for (let i = 0; i < SEEDED; i++) {
        await mcp.callTool({
          name: "file_write",
          arguments: { workspace: ws, path: `/seed/${i % 10}/f${i}.txt`, content: `${ws} ${i}\n` },
        });
      }
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    const render = summarize(await firstRender(browser, base));
    const pages = [await latency(browser, base, mcp, "activity", writes)];
    pages.push(await latency(browser, base, mcp, "ws/bench/activity", writes));
    await mcp.close();

    const rows: (string | number)[][] = [
      ["/activity first render (nav start → first row, live)", render.n, fmtMs(render.p50), fmtMs(render.p95)],
    ];
    for (const p of pages) {
      const call = summarize(p.fromCall);
      const answer = summarize(p.fromAnswer);
      rows.push([`/${p.page}: MCP write called → row drawn`, call.n, fmtMs(call.p50), fmtMs(call.p95)]);
      rows.push([`/${p.page}: MCP write answered → row drawn`, answer.n, fmtMs(answer.p50), fmtMs(answer.p95)]);
      emitJson("console-live", {
        metric: "activity_latency_ms",
        page: `/${p.page}`,
        writes: p.fromCall.length,
        from_call: { p50: round(call.p50), p95: round(call.p95), max: round(call.max) },
        from_answer: { p50: round(answer.p50), p95: round(answer.p95), max: round(answer.max) },
      });
    }
    emitJson("console-live", {
      metric: "activity_first_render_ms",
      page: "/activity",
      runs: render.n,
      seeded_changes: SEEDED * WORKSPACES.length,
      p50: round(render.p50),
      p95: round(render.p95),
    });
    printTable("console live activity (ms)", ["measure", "n", "median", "p95"], rows);
  } finally {
    await browser?.close();
    served?.child.kill("SIGTERM");
    await removeDir(dir);
  }
}

if (isMain(import.meta.url)) {
  const writes = Number(process.argv[2] ?? "20");
  main(Number.isInteger(writes) && writes > 0 ? writes : 20).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
