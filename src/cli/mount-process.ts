// The background process that keeps one mount in step: started detached by `afs mount` (it
// outlives the terminal, its output in <home>/mounts/ID.log), reporting "in step" or its start
// error over an IPC channel; stopped by SIGTERM (`afs unmount`), which uploads what is pending first;
// flushed on SIGUSR2 (`afs run`, `afs acp`), answering through the `flushed` time of its report.
// Its status for other processes is the report the Mount writes into the mount table each round.
import { spawn } from "node:child_process";
import { mkdir, open, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AfsError, type ErrorCode, toAfsError } from "../core/errors.js";
import type { MountRecord, MountReport } from "../core/mount-state.js";
import type { Env } from "../core/settings.js";
import { logFile, mountProcessAlive, mountsDir } from "../mounts/live.js";
import { Mount, type MountOptions, type MountStatus, mountId } from "../mounts/mount.js";
import type { Afs } from "../workspace/afs.js";

/** The status a started mount process hands `afs mount`. */
export interface StartedMount extends MountStatus {
  pid: number;
}

/** What the process tells `afs mount` once: in step (with its status), or why it could not start. */
type StartReport =
  | { ok: true; status: StartedMount }
  | { ok: false; code: ErrorCode; message: string; details: Record<string, unknown> };

/** How long `afs unmount` waits for the process to upload what is pending and leave. */
const STOP_WAIT_MS = 120_000;
/** How long a flush may go without a word from the process (each round reports) before `afs run` gives up. */
const FLUSH_SILENCE_MS = 60_000;
/**
 * Asks a mount process to flush. SIGUSR1 would start Node's inspector; SIGUSR2's default action
 * (ending a process that set no handler) only meets a process that is not a mount process.
 */
export const FLUSH_SIGNAL = "SIGUSR2";

/**
 * Starts the mount process for `options.dir` (a real path) and resolves with its status once the
 * directory and the workspace hold the same files; rejects with its start error (a refused first
 * mount: CONFLICT, naming --prefer).
 */
export async function startMountProcess(
  afs: Afs,
  env: Env,
  options: Required<Pick<MountOptions, "workspace" | "dir">> & Pick<MountOptions, "readonly" | "prefer">,
): Promise<StartedMount> {
  const id = mountId(options.dir);
  await mkdir(mountsDir(afs.home), { recursive: true });
  const log = await open(logFile(afs.home, id), "a");
  const args = [
    ...process.execArgv,
    process.argv[1] as string,
    "mount-run",
    options.workspace,
    options.dir,
    ...(options.readonly ? ["--readonly"] : []),
    ...(options.prefer ? ["--prefer", options.prefer] : []),
  ];
  // The store through the environment, not argv: a Redis URL may carry a password.
  const child = spawn(process.execPath, args, {
    env: { ...env, AFS_HOME: afs.home, AFS_STORE: afs.storeUrl, AFS_WRITE_CODE_CACHE: undefined },
    detached: true,
    stdio: ["ignore", log.fd, log.fd, "ipc"],
    // Not the caller's directory: the process should not keep it busy.
    cwd: "/",
  });
  await log.close();
  // Until it is in step, the process is this command's: Ctrl-C here stops it too (a signal ends
  // this process through process.exit, which runs 'exit' listeners).
  const abandon = (): void => void child.kill("SIGTERM");
  process.once("exit", abandon);
  try {
    return await new Promise<StartedMount>((resolve, reject) => {
      child.once("message", (m: StartReport) =>
        m.ok ? resolve(m.status) : reject(new AfsError(m.code, m.message, m.details)),
      );
      child.once("error", reject);
      // 'close', not 'exit': it comes after the channel closed, so a start error sent just before
      // the process ended has been read.
      child.once("close", async (code, signal) => {
        const tail = await logTail(afs.home, id);
        reject(
          new AfsError(
            "INTERNAL",
            `the mount process ended (${signal ?? `exit ${code}`}) before the directory was in step${tail ? `: ${tail}` : ""}; its log is ${logFile(afs.home, id)}`,
          ),
        );
      });
    });
  } finally {
    process.off("exit", abandon);
    if (child.connected) child.disconnect();
    child.unref();
  }
}

async function logTail(home: string, id: string): Promise<string> {
  const text = await readFile(logFile(home, id), "utf8").catch(() => "");
  return text.trim().split("\n").slice(-3).join(" ").slice(-500);
}

/** Asks the mount process `pid` to upload what is pending and stop, and waits until it has gone. */
export async function stopMountProcess(pid: number, dir: string): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (const deadline = Date.now() + STOP_WAIT_MS; mountProcessAlive(pid); await sleep(50)) {
    if (Date.now() > deadline) {
      throw new AfsError(
        "TIMEOUT",
        `the sync of ${dir} (pid ${pid}) is still uploading after ${STOP_WAIT_MS / 1000} s; run afs unmount again later, or kill ${pid} to stop it at once (a later afs mount catches up)`,
        { pid, dir },
      );
    }
  }
}

/**
 * Has the mount process `pid` of `record` look at everything changed in its directory until now
 * and upload it, and resolves with its report once it has. The answer is the `flushed` time in
 * its report: a flush that began after this call began vouches for every change made before it.
 */
export async function flushMountProcess(afs: Afs, record: MountRecord, pid: number): Promise<MountReport> {
  const asked = Date.now();
  // A flush stamped in this same millisecond could have begun before the last change: wait one.
  while (Date.now() <= asked) await sleep(1);
  try {
    process.kill(pid, FLUSH_SIGNAL);
  } catch {
    // Gone already: said below.
  }
  let heard = { at: 0, when: Date.now() };
  for (;;) {
    const report = (await afs.mounts.get(record.id))?.report;
    if (report && report.pid === pid && (report.flushed ?? 0) > asked) return report;
    if (!mountProcessAlive(pid)) {
      throw new AfsError(
        "IO_ERROR",
        `the sync of ${record.dir} (pid ${pid}) ended before it had uploaded the latest changes; see its log ${logFile(afs.home, record.id)}, and start it again with afs mount ${record.workspace} ${record.dir}`,
        { dir: record.dir, pid },
      );
    }
    if (report && report.at !== heard.at) heard = { at: report.at, when: Date.now() };
    if (Date.now() - heard.when > FLUSH_SILENCE_MS) {
      throw new AfsError(
        "TIMEOUT",
        `the sync of ${record.dir} (pid ${pid}) has not answered a request to upload its changes for ${FLUSH_SILENCE_MS / 1000} s; see afs status and its log ${logFile(afs.home, record.id)}`,
        { dir: record.dir, pid },
      );
    }
    await sleep(20);
  }
}

/** Stands in once a process stops serving flush requests: a late one is ignored, not the signal's default. */
const ignoreFlushRequest = (): void => {};

/**
 * Makes this process answer flush requests (FLUSH_SIGNAL, from flushMountProcess) for the mount it
 * runs. Installed before the mount starts, since the signal's default would end the process: a
 * request that comes earlier is answered once `serve` hands the mount over. After `stop`, requests
 * are ignored (the asker learns from the process's exit, or the mount's report, that none was made).
 */
export function answerFlushRequests(log: (line: string) => void): { serve(mount: Mount): void; stop(): void } {
  let mount: Mount | undefined;
  let wanted = false;
  const flush = (m: Mount): void =>
    void m
      .flush()
      .catch((e: unknown) => log(`${new Date().toISOString()} a requested flush failed: ${toAfsError(e).message}`));
  const onRequest = (): void => {
    if (mount) flush(mount);
    else wanted = true;
  };
  process.on(FLUSH_SIGNAL, onRequest);
  return {
    serve(m) {
      mount = m;
      if (wanted) flush(m);
    },
    stop() {
      process.off(FLUSH_SIGNAL, onRequest);
      if (!process.listeners(FLUSH_SIGNAL).includes(ignoreFlushRequest)) process.on(FLUSH_SIGNAL, ignoreFlushRequest);
    },
  };
}

const lockFile = (home: string, id: string): string => join(mountsDir(home), `${id}.lock`);

/** One process per directory: the lock file names the process; one left by a process now gone is taken over. */
export async function claim(home: string, id: string, dir: string): Promise<() => Promise<void>> {
  const file = lockFile(home, id);
  await mkdir(mountsDir(home), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return () => unlink(file).catch(() => {});
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw e;
      const holder = Number.parseInt(await readFile(file, "utf8").catch(() => ""), 10);
      if (mountProcessAlive(holder) && holder !== process.pid) {
        throw new AfsError(
          "ALREADY_EXISTS",
          `${dir} is already kept in step by process ${holder}; see afs status, or stop it with afs unmount ${dir}`,
          { dir, pid: holder },
        );
      }
      await unlink(file).catch(() => {});
    }
  }
}

/**
 * The process's whole life: mount, report to the parent, and on SIGTERM or SIGINT stop (uploading
 * what is pending). Resolves when stopped; throws a start error.
 */
export async function runMount(afs: Afs, options: MountOptions, log: (line: string) => void): Promise<void> {
  // This process's signals stop the mount first; the CLI's own handlers would close the store under it.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.removeAllListeners(signal);
  let requestStop = (): void => {};
  const stopRequested = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  process.once("SIGTERM", () => requestStop());
  process.once("SIGINT", () => requestStop());
  process.on("SIGHUP", () => {});
  const flushes = answerFlushRequests(log);
  let mount: Mount;
  const report = (m: StartReport): void => {
    // Nobody to tell when started by hand, or when `afs mount` has gone (Ctrl-C).
    if (!process.send || !process.connected) return;
    process.send(m, undefined, {}, () => {
      if (process.connected) process.disconnect?.();
    });
  };

  const id = mountId(options.dir);
  let release: (() => Promise<void>) | undefined;
  try {
    release = await claim(afs.home, id, options.dir);
    mount = await Mount.start(afs, options);
  } catch (e) {
    const err = toAfsError(e);
    // A mount already in the table stays listed: `afs status` shows why it is not running.
    const known = release ? await afs.mounts.get(id) : null;
    if (known) {
      const last = known.report;
      await afs.mounts.report(id, {
        state: "error",
        pid: process.pid,
        pending: last?.pending ?? 0,
        conflicts: last?.conflicts ?? 0,
        lastSync: last?.lastSync ?? null,
        lastError: err.message,
        at: Date.now(),
      });
    }
    await release?.();
    report({ ok: false, code: err.code, message: err.message, details: err.details });
    throw err;
  }
  log(`${new Date().toISOString()} mounted ${options.workspace} on ${options.dir} (pid ${process.pid}): in step`);
  report({ ok: true, status: { ...mount.status(), pid: process.pid } });
  flushes.serve(mount);
  // The watcher and the event follower do not hold the event loop open: this process lives until told to stop.
  const keepAlive = setInterval(() => {}, 2 ** 30);
  await stopRequested;
  clearInterval(keepAlive);
  try {
    const final = await mount.stop();
    log(`${new Date().toISOString()} stopped: ${final.pending} pending, ${final.conflicts} conflicts`);
  } finally {
    await release();
  }
}
