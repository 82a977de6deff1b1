// No lost update across processes: compare-and-swap edits (expected_sha256, retried on CONFLICT)
// and replace-op edits (which retry internally) from several processes all land, exactly once.
import { afterEach, describe, expect, it } from "vitest";
import { Afs } from "../../src/workspace/afs.js";
import { tempDir } from "../helpers/tmp.js";
import { LOG_END } from "./content.js";
import { finish, startAt, Worker } from "./harness.js";

/** Typically 3–15 s; the bound leaves room for a loaded 2-core machine running other suites. */
const TEST_TIMEOUT_MS = 120_000;

const PROCESSES = 4;
const K = 40;
const STARTUP_MS = 30_000;
const RUN_MS = 60_000;

let workers: Worker[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  workers = [];
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("read-modify-write from several processes", () => {
  it(
    `${PROCESSES} processes × ${K} counter increments and ${K} replace appends lose nothing`,
    async () => {
      const { dir: home, cleanup } = await tempDir("afs-edits-");
      cleanups.push(cleanup);
      const afs = await Afs.open({ home, actor: "parent" });
      cleanups.push(() => afs.close());
      await afs.workspaces.create("edits");
      const volume = await afs.workspaces.volume("edits");
      await volume.writeFile("/counter.txt", Buffer.from("0\n"), { op: "write" });
      await volume.writeFile("/log.txt", Buffer.from(LOG_END), { op: "write" });

      const ids = Array.from({ length: PROCESSES }, (_, n) => `p${n}`);
      workers = ids.map((id) => Worker.spawn(id, "edits", { home, workspace: "edits", id, k: K, maxAttempts: 5000 }));
      await Promise.all(workers.map((w) => w.waitFor((m) => m.t === "ready", STARTUP_MS, "ready")));
      const at = startAt();
      for (const w of workers) w.send({ at });
      const reports = await Promise.all(workers.map((w) => w.waitFor((m) => m.t === "done", RUN_MS, "done")));
      await Promise.all(workers.map((w) => finish(w, 10_000)));

      // The workers really ran at the same time (else this test would prove nothing).
      const starts = reports.map((r) => Number(r.start));
      const ends = reports.map((r) => Number(r.end));
      expect(Math.max(...starts), "workers never overlapped").toBeLessThan(Math.min(...ends));
      const conflicts = reports.reduce((sum, r) => sum + Number(r.conflicts), 0);
      console.info(`expected-sha edits: ${conflicts} CONFLICT retries across ${PROCESSES * K} increments`);

      expect((await volume.readFile("/counter.txt")).toString("utf8")).toBe(`${PROCESSES * K}\n`);

      const log = (await volume.readFile("/log.txt")).toString("utf8");
      expect(log.endsWith(LOG_END), "the end marker survived").toBe(true);
      const lines = log.slice(0, -LOG_END.length).split("\n").filter(Boolean);
      const want = ids.flatMap((id) => Array.from({ length: K }, (_, j) => `${id} line ${j}`));
      const missing = want.filter((line) => !lines.includes(line));
      expect(missing, "appended lines lost").toEqual([]);
      expect([...lines].sort()).toEqual([...want].sort());
      // Each process's own appends stay in its order (every edit saw the previous one).
      for (const id of ids) {
        const own = lines.filter((l) => l.startsWith(`${id} `));
        expect(own).toEqual(want.filter((l) => l.startsWith(`${id} `)));
      }

      const fsck = await afs.maintenance.fsck();
      expect(fsck.problems).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
