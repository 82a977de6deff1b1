// A real Chromium (Debian's, through playwright-core) on a real `afs serve`: pages are opened
// with every console message, page error and failed request recorded, so a test can require a
// page to load without any, and each test can leave a screenshot of what it saw.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's chromium; AFS_CHROMIUM points elsewhere. */
export const CHROMIUM = process.env.AFS_CHROMIUM ?? "/usr/bin/chromium";

/** Where screenshots go: AFS_SCREENSHOTS, else test-results/console-screenshots. */
export const SCREENSHOTS = process.env.AFS_SCREENSHOTS ?? join(process.cwd(), "test-results", "console-screenshots");

export const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });

export interface Opened {
  page: Page;
  /** Console errors, uncaught page errors and failed requests, in order. */
  problems: string[];
}

/** A fresh browser context (own cookies) with one page at `url`. */
export async function open(
  browser: Browser,
  url: string,
  options: { colorScheme?: "light" | "dark" } = {},
): Promise<Opened> {
  const context = await browser.newContext({ colorScheme: options.colorScheme ?? "light" });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => {
    // A page leaving with a stream open (server-sent events) cancels it; that is no failure.
    if (r.failure()?.errorText !== "net::ERR_ABORTED")
      problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on("dialog", (d) => problems.push(`dialog: ${d.message()}`));
  await page.goto(url);
  return { page, problems };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
