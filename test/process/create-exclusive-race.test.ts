// Separate processes, each with its own Afs on one SQLite file, race create_exclusive on the same
// path round after round: exactly one wins, the rest get ALREADY_EXISTS, the file is the winner's.
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { tempDir } from "../helpers/tmp.js";
import { finish, type Message, startAt, Worker } from "./harness.js";

/** Typically 3–15 s; the bound leaves room for a loaded 2-core machine running other suites. */
const TEST_TIMEOUT_MS = 120_000;

const PROCESSES = 6;
const ROUNDS = 20;
const STARTUP_MS = 40_000;
const ROUND_MS = 20_000;

const contentOf = (id: string, round: number): string => `round ${round} created by ${id}\n`.repeat(16);

let workers: Worker[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  workers = [];
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("create_exclusive across processes", () => {
  it(
    `${PROCESSES} processes × ${ROUNDS} rounds: one winner per path, everyone else ALREADY_EXISTS`,
    async () => {
      const { dir: home, cleanup } = await tempDir("afs-race-");
      cleanups.push(cleanup);
      const afs = await Afs.open({ home, actor: "parent" });
      cleanups.push(() => afs.close());
      await afs.workspaces.create("race");
      const volume = await afs.workspaces.volume("race");

      const ids = Array.from({ length: PROCESSES }, (_, n) => `p${n}`);
      workers = ids.map((id) => Worker.spawn(id, "race", { home, workspace: "race", id, rounds: ROUNDS }));

      const paths: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const isReady = (m: Message): boolean => m.t === "ready" && m.round === round;
        await Promise.all(
          workers.map((w) => w.waitFor(isReady, round === 0 ? STARTUP_MS : ROUND_MS, `ready ${round}`)),
        );
        const path = `/race/r${round}.txt`;
        paths.push(path);
        const at = startAt();
        for (const w of workers) w.send({ path, at });
        const isResult = (m: Message): boolean => m.t === "result" && m.round === round;
        const results = await Promise.all(workers.map((w) => w.waitFor(isResult, ROUND_MS, `result ${round}`)));

        const outcomes = results.map((m, n) => `${ids[n]}: ${String(m.outcome)}`).join(", ");
        const winners = ids.filter((_, n) => results[n]?.outcome === "won");
        expect(winners, `round ${round}: ${outcomes}`).toHaveLength(1);
        const losers = results.filter((m) => m.outcome !== "won").map((m) => m.outcome);
        expect(losers, `round ${round}: ${outcomes}`).toEqual(Array(PROCESSES - 1).fill("ALREADY_EXISTS"));

        const winner = winners[0] as string;
        const data = await volume.readFile(path);
        expect(data.length, `round ${round}: ${path} is empty`).toBeGreaterThan(0);
        expect(data.toString("utf8"), `round ${round}: content is not the winner's (${winner})`).toBe(
          contentOf(winner, round),
        );
        expect((await volume.stat(path))?.sha256).toBe(sha256(contentOf(winner, round)));
      }
      await Promise.all(workers.map((w) => finish(w, ROUND_MS)));

      // The event log is the audit trail: one creation per path, never a second write over it.
      const events = await internalsOf(afs).store.listEvents("race", 0, 100_000);
      for (const path of paths) {
        const writes = events.filter((e) => e.path === path);
        expect(writes, `events for ${path}`).toHaveLength(1);
        expect(writes[0]?.oldHash, `events for ${path}`).toBeNull();
      }
      const fsck = await afs.maintenance.fsck();
      expect(fsck.problems).toEqual([]);
      expect(fsck.ok).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
