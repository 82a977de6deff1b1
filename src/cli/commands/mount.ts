// `afs mount`, `afs unmount` and the hidden `afs mount-run`: a workspace kept in step with a local
// directory by a background process of its own (see ../mount-process.ts), listed by `afs status`.
import { mkdir, realpath, rm, stat } from "node:fs/promises";
import { type Command, Option } from "commander";
import { AfsError, isAfsError } from "../../core/errors.js";
import type { MountRecord } from "../../core/mount-state.js";
import type { Env } from "../../core/settings.js";
import { describeMount, listing, logFile, type MountListing, mountProcessAlive } from "../../mounts/live.js";
import { Mount, mountId } from "../../mounts/mount.js";
import type { Afs } from "../../workspace/afs.js";
import type { Io } from "../context.js";
import { startBuilderAfter } from "../index-builder.js";
import { runMount, startMountProcess, stopMountProcess } from "../mount-process.js";
import type { JsonFlag } from "../output.js";
import { leaf } from "./leaf.js";

interface MountFlags extends JsonFlag {
  readonly?: boolean;
  prefer?: "local" | "remote";
}

const preferOption = (): Option =>
  new Option(
    "--prefer <side>",
    "first mount when both sides hold differing files: the side that stays (the other's versions are kept as conflict copies)",
  ).choices(["local", "remote"]);

export function registerMountCommands(program: Command, io: Io): void {
  leaf(program, "mount <workspace> <dir>", "keep DIR and WORKSPACE in step both ways, in a background process")
    .option("--readonly", "the directory follows the workspace; local edits are not uploaded")
    .addOption(preferOption())
    .action((workspace: string, dir: string, flags: MountFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const m = await ensureMounted(afs, io.env, {
          workspace,
          dir: io.path(dir),
          readonly: flags.readonly,
          prefer: flags.prefer,
        });
        io.emit(flags, m, (m) =>
          m.started
            ? `mounted ${m.workspace} on ${m.dir}: in step (${m.uploaded} uploaded, ${m.downloaded} downloaded, ${m.conflicts} conflicts); syncing in the background as pid ${m.pid}, stop it with afs unmount ${m.dir}`
            : `already mounted: ${describeMount(m)}`,
        );
      }),
    );

  leaf(program, "unmount <target>", "upload what is pending and stop syncing DIR (or every mount of WORKSPACE)")
    .addHelpText("after", "\nTARGET is a mounted directory or a workspace name. The directory keeps its files.")
    .action((target: string, flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const chosen = await mountsNamed(afs, io.path(target), target);
        const stopped: MountListing[] = [];
        for (const record of chosen) stopped.push(await unmount(afs, record));
        io.emit(flags, { unmounted: stopped }, (r) =>
          r.unmounted.map((m) => `unmounted ${m.workspace} from ${m.dir} (${m.conflicts} conflicts over its life)`),
        );
      }),
    );

  // The background process itself, started by `afs mount` (not for people to type).
  program
    .command("mount-run <workspace> <dir>", { hidden: true })
    .option("--readonly")
    .addOption(preferOption())
    .action((workspace: string, dir: string, flags: MountFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        await runMount(afs, { workspace, dir, readonly: flags.readonly, prefer: flags.prefer }, (line) =>
          io.warn(`${line}\n`),
        );
        // Whatever still holds the event loop (a client's reconnect timer) must not keep a stopped mount alive.
        setTimeout(() => process.exit(0), 2_000).unref();
      }),
    );
}

/** A mount `ensureMounted` found running, or started (with what its first sync moved). */
export type EnsuredMount = MountListing &
  ({ started: false } | { started: true; uploaded: number; downloaded: number });

/**
 * What `afs mount` does: mounts `dir` (an absolute path, created when missing) on `workspace` in a
 * background process and resolves once both hold the same files; a mount of that directory whose
 * process still runs is left as it is (on another workspace: ALREADY_EXISTS).
 */
export async function ensureMounted(
  afs: Afs,
  env: Env,
  options: { workspace: string; dir: string; readonly?: boolean; prefer?: "local" | "remote" },
): Promise<EnsuredMount> {
  const { workspace } = options;
  await mkdir(options.dir, { recursive: true });
  const real = await realpath(options.dir);
  const known = await afs.mounts.get(mountId(real));
  if (known && mountProcessAlive(known.report?.pid)) {
    if (known.workspace !== workspace) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${real} is mounted on workspace ${known.workspace}; unmount it first (afs unmount ${real}), or mount ${known.workspace}`,
        { dir: real, workspace: known.workspace },
      );
    }
    return { ...listing(known), started: false };
  }
  const s = await startMountProcess(afs, env, { ...options, dir: real });
  // Many files came in: grep's content index is built in the background (see afs index status).
  await startBuilderAfter(afs, env, s.uploaded + s.downloaded);
  return {
    workspace,
    dir: real,
    state: s.state,
    readonly: s.readonly,
    pid: s.pid,
    pending: s.pending,
    conflicts: s.conflicts,
    last_sync: s.lastSync === null ? null : new Date(s.lastSync).toISOString(),
    last_error: s.lastError,
    uploaded: s.uploaded,
    downloaded: s.downloaded,
    started: true,
  };
}

/** The mounts a typed target names: the directory first, else every mount of the workspace of that name. */
async function mountsNamed(afs: Afs, path: string, typed: string): Promise<MountRecord[]> {
  const records = await afs.mounts.list();
  const real = await realpath(path).catch(() => path);
  const byDir = records.filter((r) => r.dir === real || r.dir === path);
  const chosen = byDir.length > 0 ? byDir : records.filter((r) => r.workspace === typed);
  if (chosen.length > 0) return chosen;
  const mounted = records.map((r) => `${r.workspace} on ${r.dir}`).join(", ");
  throw new AfsError(
    "NOT_FOUND",
    records.length === 0
      ? `nothing is mounted on this machine (mount with afs mount WORKSPACE DIR)`
      : `${typed} is neither a mounted directory nor a mounted workspace; mounted here: ${mounted}`,
    { target: typed, mounted: records.map((r) => ({ workspace: r.workspace, dir: r.dir })) },
  );
}

/**
 * Stops a mount's process (it uploads what is pending first) and forgets the mount. One whose
 * process is gone is caught up here once, so edits made since it died are uploaded too.
 */
async function unmount(afs: Afs, record: MountRecord): Promise<MountListing> {
  const pid = record.report?.pid;
  if (mountProcessAlive(pid)) {
    await stopMountProcess(pid, record.dir);
  } else if ((await isDirectory(record.dir)) && (await workspaceExists(afs, record.workspace))) {
    const mount = await Mount.start(afs, { workspace: record.workspace, dir: record.dir, readonly: record.readonly });
    await mount.stop();
  }
  const final = listing((await afs.mounts.get(record.id)) ?? record);
  if (final.pending > 0 && !record.readonly) {
    throw new AfsError(
      "IO_ERROR",
      `${final.pending} changed paths in ${record.dir} could not be uploaded${final.last_error ? ` (${final.last_error})` : ""}; it stays mounted: fix that and run afs unmount again, or afs mount ${record.workspace} ${record.dir} to keep syncing`,
      { dir: record.dir, pending: final.pending },
    );
  }
  await afs.mounts.forget(record.id);
  await rm(logFile(afs.home, record.id), { force: true });
  return { ...final, state: "stopped", pid: null };
}

/** A mount whose workspace was deleted has nothing to catch up with: unmounting it only forgets it. */
const workspaceExists = (afs: Afs, name: string): Promise<boolean> =>
  afs.workspaces.get(name).then(
    () => true,
    (e: unknown) => {
      if (isAfsError(e) && e.code === "NOT_FOUND") return false;
      throw e;
    },
  );

const isDirectory = (path: string): Promise<boolean> =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
