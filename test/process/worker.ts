// A child process for the multi-process tests: opens its own Afs on the shared AFS_HOME and runs
// one scenario, taking orders as JSON lines on stdin and reporting JSON lines on stdout.
// Usage: node --import tsx test/process/worker.ts <race|edits|crash|loop> '<json args>'
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setImmediate as yieldToEvents } from "node:timers/promises";
import { AfsError } from "../../src/core/errors.js";
import { sha256 } from "../../src/core/hash.js";
import { createExclusive } from "../../src/ops/create-exclusive.js";
import { replace } from "../../src/ops/replace.js";
import type { Volume } from "../../src/volume/volume.js";
import { Afs } from "../../src/workspace/afs.js";
import { LOG_END, stampedContent } from "./content.js";

interface Common {
  home: string;
  workspace: string;
  id: string;
}

/**
 * Prints one message and resolves once it has reached the kernel: when the parent is slow to read,
 * a write is queued in this process, and a kill or exit would silently drop it (and every later line).
 */
async function say(message: object): Promise<void> {
  if (!process.stdout.write(`${JSON.stringify(message)}\n`)) await once(process.stdout, "drain");
}

// --- orders from the parent ------------------------------------------------------------------

const inbox: Record<string, unknown>[] = [];
const waiting: ((m: Record<string, unknown>) => void)[] = [];
let stopRequested = false;
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  const m = JSON.parse(line) as Record<string, unknown>;
  if (m.t === "stop") stopRequested = true;
  const next = waiting.shift();
  if (next) next(m);
  else inbox.push(m);
});

const nextOrder = (): Promise<Record<string, unknown>> => {
  const m = inbox.shift();
  return m ? Promise.resolve(m) : new Promise((done) => waiting.push(done));
};

/** Sleeps until shortly before `at`, then spins to it, so processes start within a millisecond. */
async function until(at: number): Promise<void> {
  const lead = at - Date.now() - 3;
  if (lead > 0) await new Promise((done) => setTimeout(done, lead));
  while (Date.now() < at) {
    // spin
  }
}

async function go(): Promise<void> {
  await say({ t: "ready" });
  const order = await nextOrder();
  await until(Number(order.at));
}

// --- scenarios -------------------------------------------------------------------------------

/** Each round: wait for the go, then try to create the round's file with this worker's content. */
async function race(volume: Volume, args: Common & { rounds: number }): Promise<void> {
  for (let round = 0; round < args.rounds; round++) {
    await say({ t: "ready", round });
    const order = await nextOrder();
    const path = String(order.path);
    const content = `round ${round} created by ${args.id}\n`.repeat(16);
    await until(Number(order.at));
    try {
      const result = await createExclusive(volume, { path, content });
      await say({ t: "result", round, outcome: "won", sha256: result.sha256 ?? sha256(content) });
    } catch (e) {
      if (!(e instanceof AfsError)) throw e;
      await say({ t: "result", round, outcome: e.code, message: e.message });
    }
  }
  await say({ t: "done" });
}

/** K compare-and-swap increments of /counter.txt and K replace-op appends to /log.txt, interleaved. */
async function edits(volume: Volume, args: Common & { k: number; maxAttempts: number }): Promise<void> {
  await go();
  const start = Date.now();
  let conflicts = 0;
  for (let j = 0; j < args.k; j++) {
    let done = false;
    for (let attempt = 0; attempt < args.maxAttempts && !done; attempt++) {
      const data = await volume.readFile("/counter.txt");
      const n = Number.parseInt(data.toString("utf8"), 10);
      if (!Number.isInteger(n)) throw new Error(`counter is not a number: ${JSON.stringify(data.toString())}`);
      try {
        await volume.writeFile("/counter.txt", Buffer.from(`${n + 1}\n`), { op: "write", expectSha256: sha256(data) });
        done = true;
      } catch (e) {
        if (!(e instanceof AfsError && e.code === "CONFLICT")) throw e;
        conflicts++;
      }
    }
    if (!done) throw new Error(`increment ${j} still conflicting after ${args.maxAttempts} attempts`);
    await replace(volume, { path: "/log.txt", old: LOG_END, new: `${args.id} line ${j}\n${LOG_END}` });
  }
  await say({ t: "done", start, end: Date.now(), conflicts });
}

/** Writes until killed (or the bounds run out), announcing each write before and after it. */
async function crash(
  afs: Afs,
  volume: Volume,
  args: Common & { limit: number; timeLimitMs: number; checkpointEvery: number },
): Promise<void> {
  const deadline = Date.now() + args.timeLimitMs;
  for (let i = 0; i < args.limit && Date.now() < deadline; i++) {
    const h = Number.parseInt(sha256(`${args.id}:${i}`).slice(0, 8), 16);
    // 300 distinct paths, so a few hundred writes include many overwrites; some nested deep.
    const k = h % 300;
    const path = k < 30 ? `/deep/a${k % 7}/b${k % 5}/c${k}.txt` : `/d${k % 23}/f${k}.txt`;
    const content = stampedContent({ writer: args.id, i, path });
    const sha = sha256(content);
    await say({ t: "intent", i, path, sha256: sha });
    const result = await volume.writeFile(path, content, { op: "write" });
    if (result.sha256 !== sha) throw new Error(`write of ${path} reported ${result.sha256}, expected ${sha}`);
    await say({ t: "ack", i, path, sha256: sha });
    if ((i + 1) % args.checkpointEvery === 0) {
      await say({ t: "checkpoint-start", i });
      const cp = await afs.checkpoints.create(args.workspace, { name: `${args.id}-${i}` });
      await say({ t: "checkpoint-done", i, name: cp.checkpoint.name });
    }
  }
  await say({ t: "done" });
}

/** Writes self-checking files in a loop until told to stop (or the bounds run out). */
async function loop(volume: Volume, args: Common & { limit: number; timeLimitMs: number }): Promise<void> {
  await go();
  const deadline = Date.now() + args.timeLimitMs;
  let i = 0;
  for (; i < args.limit && Date.now() < deadline && !stopRequested; i++) {
    const path = i % 3 === 2 ? `/w/sub${i % 5}/g${i % 11}.txt` : `/w/f${i % 40}.txt`;
    const content = stampedContent({ writer: args.id, i, path });
    await volume.writeFile(path, content, { op: "write" });
    await say({ t: "ack", i, path, sha256: sha256(content) });
    // Lets the stop order in even if every store call completes synchronously.
    await yieldToEvents();
  }
  await say({ t: "done", writes: i });
}

// --- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const [mode, raw] = process.argv.slice(2);
  const args = JSON.parse(raw ?? "{}") as Common & Record<string, number>;
  const afs = await Afs.open({ home: args.home, actor: `worker-${args.id}` });
  try {
    const volume = await afs.workspaces.volume(args.workspace);
    switch (mode) {
      case "race":
        return await race(volume, { ...args, rounds: Number(args.rounds) });
      case "edits":
        return await edits(volume, { ...args, k: Number(args.k), maxAttempts: Number(args.maxAttempts) });
      case "crash":
        return await crash(afs, volume, {
          ...args,
          limit: Number(args.limit),
          timeLimitMs: Number(args.timeLimitMs),
          checkpointEvery: Number(args.checkpointEvery),
        });
      case "loop":
        return await loop(volume, { ...args, limit: Number(args.limit), timeLimitMs: Number(args.timeLimitMs) });
      default:
        throw new Error(`unknown mode ${mode}`);
    }
  } finally {
    await afs.close();
  }
}

main().then(
  () => process.exit(0),
  async (e: unknown) => {
    const err = e instanceof Error ? e : new Error(String(e));
    await say({
      t: "error",
      code: e instanceof AfsError ? e.code : "UNEXPECTED",
      message: err.message,
      stack: err.stack,
    });
    process.exit(1);
  },
);
