// Crash safety on a real SQLite file: a writer process is SIGKILLed mid-stream (mid-write, during a
// checkpoint, with a write in flight); the store must then open, pass fsck (in-process and through
// the built CLI), and hold every write the writer saw acknowledged.
import { afterEach, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { Afs } from "../../src/workspace/afs.js";
import { tempDir } from "../helpers/tmp.js";
import { readStamp } from "./content.js";
import { CLI, cliFsck, type Exit, type Message, Worker } from "./harness.js";

/** The writer stops by itself after this long or this many writes; it must be killed well before. */
const WRITER_LIMIT = { limit: 100_000, timeLimitMs: 40_000, checkpointEvery: 40 };

interface KillMoment {
  label: string;
  /** Called for every message with the number of acks so far; true = SIGKILL now. */
  when: (m: Message, acks: number) => boolean;
}

/** Typically 3–15 s; the bound leaves room for a loaded 2-core machine running other suites. */
const TEST_TIMEOUT_MS = 120_000;

const MOMENTS: KillMoment[] = [
  { label: "right after the 150th ack", when: (m, acks) => m.t === "ack" && acks >= 150 },
  { label: "during a checkpoint, after 300 acks", when: (m, acks) => m.t === "checkpoint-start" && acks >= 300 },
  { label: "with a write in flight, after 450 acks", when: (m, acks) => m.t === "intent" && acks >= 450 },
];

let workers: Worker[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  workers = [];
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** Runs a writer on `home` and SIGKILLs it at `moment`; returns everything it printed. */
async function writeUntilKilled(home: string, run: number, moment: KillMoment): Promise<{ messages: Message[] }> {
  const worker = Worker.spawn(`writer ${run}`, "crash", { home, workspace: "crash", id: `run${run}`, ...WRITER_LIMIT });
  workers.push(worker);
  let acks = 0;
  let killed = false;
  worker.onMessage((m) => {
    if (m.t === "ack") acks++;
    if (!killed && moment.when(m, acks)) {
      killed = true;
      worker.child.kill("SIGKILL");
    }
  });
  const started = Date.now();
  const exit: Exit = await worker.exited;
  const failure = worker.messages.find((m) => m.t === "error" || m.t === "done");
  if (!killed || exit.signal !== "SIGKILL" || failure) {
    throw new Error(
      `${worker.name} was not killed ${moment.label}: exit ${JSON.stringify(exit)} after ${acks} acks in ` +
        `${Date.now() - started} ms, last message ${JSON.stringify(failure ?? worker.messages.at(-1))}\n${worker.describe()}`,
    );
  }
  return { messages: worker.messages };
}

describe("crash safety", () => {
  it(
    "SIGKILL at three moments: the store opens, fsck passes, every acknowledged write is there",
    async () => {
      const { dir: home, cleanup } = await tempDir("afs-crash-");
      cleanups.push(cleanup);
      const setup = await Afs.open({ home, actor: "parent" });
      await setup.workspaces.create("crash");
      await setup.close();

      // What each path must hold now: the sha of its last acknowledged write (or of a newer
      // unacknowledged one that was seen to land, after the run that made it was checked).
      const expected = new Map<string, string>();
      let cliChecked = 0;
      for (const [run, moment] of MOMENTS.entries()) {
        const { messages } = await writeUntilKilled(home, run, moment);
        const acked = messages.filter((m) => m.t === "ack");
        expect(acked.length, `run ${run}: acks before the kill`).toBeGreaterThanOrEqual(150);
        for (const m of acked) expected.set(String(m.path), String(m.sha256));
        // A write the writer started but never acknowledged may or may not have landed.
        const lastIntent = messages.filter((m) => m.t === "intent").at(-1);
        const inFlight = lastIntent && lastIntent.i !== acked.at(-1)?.i ? lastIntent : undefined;
        const checkpoints = messages.filter((m) => m.t === "checkpoint-done").map((m) => String(m.name));

        const afs = await Afs.open({ home, actor: "checker" });
        try {
          const fsck = await afs.maintenance.fsck();
          expect(fsck.problems, `run ${run} (${moment.label}): fsck problems`).toEqual([]);
          expect(fsck.ok).toBe(true);

          const volume = await afs.workspaces.volume("crash");
          const lost: string[] = [];
          for (const [path, sha] of expected) {
            const stat = await volume.stat(path);
            const actual = stat?.sha256 ?? "missing";
            const landedInFlight = inFlight && inFlight.path === path && inFlight.sha256 === actual;
            if (actual !== sha && !landedInFlight) {
              lost.push(`${path}: acknowledged ${sha}, found ${actual}`);
              continue;
            }
            const data = await volume.readFile(path);
            expect(sha256(data), `${path}: content does not match its stat`).toBe(actual);
            expect(readStamp(data).ok, `${path}: torn content`).toBe(true);
            expected.set(path, actual);
          }
          expect(lost, `run ${run} (${moment.label}): acknowledged writes lost`).toEqual([]);

          for (const name of checkpoints) {
            expect((await afs.checkpoints.get("crash", name)).name, `run ${run}: checkpoint ${name}`).toBe(name);
          }
          // The workspace is still writable after the crash.
          await volume.writeFile("/after-crash.txt", Buffer.from(`run ${run}\n`), { op: "write" });
        } finally {
          await afs.close();
        }

        const cli = await cliFsck(home);
        if (cli === null) {
          console.warn(`crash test: ${CLI} does not exist (run npm run build); skipped the CLI fsck check`);
        } else {
          expect(cli.code, `run ${run}: afs fsck output:\n${cli.output}`).toBe(0);
          cliChecked++;
        }
      }
      console.info(
        `crash test: ${expected.size} paths verified over ${MOMENTS.length} kills; CLI fsck ran ${cliChecked}×`,
      );
    },
    TEST_TIMEOUT_MS,
  );
});
