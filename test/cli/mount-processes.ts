// What the CLI tests that start mount processes share: whether a process still runs, waiting for
// a condition, and waiting for a process to end (mount processes are detached: the tests must
// see every one of them go).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

/** Whether `pid` still runs: a zombie (ended, not yet reaped by its new parent) does not. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return process.platform !== "linux";
  }
};

/** Polls `test` until it holds, failing with `what` after `ms`. */
export async function until(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  for (const deadline = Date.now() + ms; !test(); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
  }
}

/** An unmounted process is gone: unmount waited for it to end (it may take a moment more to be reaped). */
export const gone = (pid: number): Promise<void> => until(`process ${pid} has ended`, () => !alive(pid), 10_000);

/** Ends every process in `pids` whatever state it is in: after a file's tests, nothing of theirs runs on. */
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}
