// Processes that open a brand-new SQLite file at the same instant (two afs commands on a fresh
// home, searches creating the index file) must all succeed: switching a new file to WAL makes
// SQLite answer BUSY at once, which the stores must wait out rather than report.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../cli/run.js";
import { tempDir } from "../helpers/tmp.js";

const PROCESSES = 6;
const ROUNDS = 5;

const dist = (path: string): string => JSON.stringify(pathToFileURL(join(ROOT, "dist", path)).href);

/** What each process does: `load` before the common start instant, `open` at it. */
const OPENERS = {
  store: {
    load: `const { SqliteStore } = await import(${dist("store/sqlite/store.js")});`,
    open: "const s = SqliteStore.open(file); await s.listWorkspaces(); await s.close();",
  },
  index: {
    load: `const { IndexDb } = await import(${dist("store/index-db.js")});`,
    open: 'const d = IndexDb.open(file); d.ensureSchema("race", ["CREATE TABLE t (a)"]); d.close();',
  },
};

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ensureBuilt();
  ({ dir, cleanup } = await tempDir("afs-open-race-"));
});
afterAll(() => cleanup());

/** Runs `opener` in a new Node process, opening when the clock reaches `at` (all within a millisecond). */
function openAt(
  opener: { load: string; open: string },
  file: string,
  at: number,
): Promise<{ code: number | null; stderr: string }> {
  const script = `${opener.load} const file = ${JSON.stringify(file)}; while (Date.now() < ${at}) {} ${opener.open}`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("close", (code) => done({ code, stderr }));
  });
}

describe("opening a new SQLite file from several processes at once", () => {
  it.each(Object.entries(OPENERS))(
    "%s: every process opens it",
    async (name, opener) => {
      for (let round = 0; round < ROUNDS; round++) {
        const file = join(dir, `${name}-${round}.db`);
        const at = Date.now() + 1500;
        const runs = await Promise.all(Array.from({ length: PROCESSES }, () => openAt(opener, file, at)));
        for (const r of runs) expect(r.code, r.stderr).toBe(0);
      }
    },
    60_000,
  );
});
