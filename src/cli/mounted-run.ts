// `afs run`: a command in a mounted directory (mounted first when it is not), between two
// checkpoints. Whatever the command changes, through any tool, reaches the workspace through the
// mount's sync; asking the sync to flush before each checkpoint is what makes them hold it.
import { spawn } from "node:child_process";
import { mkdir, realpath } from "node:fs/promises";
import { AfsError } from "../core/errors.js";
import type { MountRecord, MountReport } from "../core/mount-state.js";
import { mountId } from "../mounts/mount.js";
import type { Afs } from "../workspace/afs.js";
import type { DiffSummary } from "../workspace/diff.js";
import { ensureMounted } from "./commands/mount.js";
import type { Io } from "./context.js";
import { ExitStatus } from "./errors.js";
import { flushMountProcess } from "./mount-process.js";
import { type ChildExit, childExit } from "./process-group.js";

export interface RunFlags {
  dir?: string;
  json?: boolean;
  /** -w as typed: it must agree with the workspace an already mounted directory follows. */
  explicitWorkspace?: string;
  /** -w, else $AFS_WORKSPACE (else the current workspace): for a directory not mounted yet. */
  workspace?: string;
}

/** What `afs run --json` prints. */
export interface RunResult {
  workspace: string;
  /** The mounted directory. */
  dir: string;
  command: string[];
  /** The command's exit status (128 + signal number when a signal ended it; 127: not found). */
  status: number;
  /** Whether this run mounted the directory (it stays mounted). */
  mounted: boolean;
  /** The checkpoint to restore to undo the run: made before it when the live state had changes, else the head. */
  before: string;
  before_created: boolean;
  /** The checkpoint made after the run; null when the run changed nothing. */
  after: string | null;
  changed: boolean;
  summary: DiffSummary;
  /** Paths the sync could not upload (a locked file, the store unreachable): not in the checkpoint. */
  pending: number;
  undo: string | null;
}

/** Signals that end `afs run` are the command's to handle: they are passed on, and afs waits for it. */
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const MAX_DESCRIPTION = 200;

export async function runMounted(afs: Afs, io: Io, command: readonly string[], flags: RunFlags): Promise<void> {
  if (command.length === 0) throw new AfsError("INVALID_ARGUMENT", "no command given; put it after --");
  const line = commandLine(command);
  const say = (text: string): void => io.warn(`afs run: ${text}\n`);

  // The directory: the one given (or the current one), or the mounted directory it lies in.
  const typed = io.path(flags.dir ?? ".");
  await mkdir(typed, { recursive: true });
  const target = await realpath(typed);
  const enclosing = enclosingMount(await afs.mounts.list(), target);
  if (enclosing && flags.explicitWorkspace !== undefined && flags.explicitWorkspace !== enclosing.workspace) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `${target} is mounted on workspace ${enclosing.workspace}${enclosing.dir === target ? "" : ` (as part of ${enclosing.dir})`}, not ${flags.explicitWorkspace}; run without -w, or unmount it first (afs unmount ${enclosing.dir})`,
      { dir: enclosing.dir, workspace: enclosing.workspace },
    );
  }
  const workspace = enclosing?.workspace ?? (await afs.workspaces.resolve(flags.workspace));
  const mount = await ensureMounted(afs, io.env, { workspace, dir: enclosing?.dir ?? target });
  if (mount.started) say(`mounted ${workspace} on ${mount.dir}; it stays mounted (afs unmount ${mount.dir} stops it)`);
  if (mount.readonly) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `${mount.dir} is mounted read-only: what a command changes there is never uploaded, so afs run cannot checkpoint it; mount it writable (afs unmount ${mount.dir}, then afs mount ${workspace} ${mount.dir})`,
      { dir: mount.dir },
    );
  }
  const record = await afs.mounts.get(mountId(mount.dir));
  if (!record || mount.pid === null) {
    throw new AfsError("INTERNAL", `the mount of ${mount.dir} is not listed; see afs status`, { dir: mount.dir });
  }
  const pid = mount.pid;
  const flushed = async (when: string): Promise<number> => {
    const report = await flushMountProcess(afs, record, pid);
    if (report.pending > 0) say(notUploaded(report, when));
    return report.pending;
  };

  await flushed("before the command");
  const before = await afs.checkpoints.create(workspace, {
    kind: "auto",
    description: clip(`before: ${line}`),
  });
  if (before.created) say(`checkpointed the changes made before the run as ${before.checkpoint.name}`);

  const cwd = within(await realpath(io.cwd).catch(() => io.cwd), target) ? io.cwd : target;
  const exit = await runChild(command, cwd, io.env);
  if ("missing" in exit) {
    say(exit.missing);
    throw new ExitStatus(exit.status);
  }

  const pending = await flushed("after the command");
  const after = await afs.checkpoints.create(workspace, { kind: "auto", description: clip(line) });
  // Head unmoved: the live state after the run folds to what it was before (nothing changed).
  const changed = after.checkpoint.name !== before.checkpoint.name;
  const summary = changed
    ? (await afs.checkpoints.diff(workspace, before.checkpoint.name, after.checkpoint.name)).summary
    : { added: 0, modified: 0, deleted: 0, renamed: 0 };
  const undo = changed ? `afs cp restore ${before.checkpoint.name} -w ${workspace}` : null;
  const result: RunResult = {
    workspace,
    dir: mount.dir,
    command: [...command],
    status: exit.status,
    mounted: mount.started,
    before: before.checkpoint.name,
    before_created: before.created,
    after: changed ? after.checkpoint.name : null,
    changed,
    summary,
    pending,
    undo,
  };
  if (flags.json) io.write(`${JSON.stringify(result, null, 2)}\n`);
  else for (const text of describe(result, exit)) say(text);
  if (exit.status !== 0) throw new ExitStatus(exit.status);
}

function describe(r: RunResult, exit: ChildExit): string[] {
  const ended = exit.status === 0 ? [] : [`${r.command[0]} ${exit.text}`];
  if (!r.changed) return [...ended, `the command changed nothing in ${r.workspace}; no checkpoint made`];
  const { added, modified, deleted, renamed } = r.summary;
  const moved = renamed > 0 ? `, ${renamed} renamed` : "";
  return [
    ...ended,
    `${added} added, ${modified} modified, ${deleted} deleted${moved} in ${r.workspace}: checkpoints ${r.before} (before) and ${r.after} (after)`,
    `undo with: ${r.undo}`,
  ];
}

/** The mount whose directory is `dir` or holds it (the innermost); undefined when none. */
function enclosingMount(records: readonly MountRecord[], dir: string): MountRecord | undefined {
  return records
    .filter((r) => within(dir, r.dir))
    .sort((a, b) => b.dir.length - a.dir.length)
    .at(0);
}

const within = (path: string, dir: string): boolean => path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);

function notUploaded(report: MountReport, when: string): string {
  const why = report.lastError ? ` (${report.lastError})` : "";
  return `${report.pending} changed paths could not be uploaded ${when}${why}; the checkpoint does not hold them (afs status shows the mount)`;
}

/**
 * Runs the command with this terminal (same process group, so job control and Ctrl-C reach it as
 * they would without afs), waiting for it whatever signal afs gets meanwhile.
 */
async function runChild(
  command: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<ChildExit | { status: number; missing: string }> {
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, { cwd, env, stdio: "inherit" });
  const exited = new Promise<ChildExit>((resolve) =>
    child.once("exit", (code, signal) => resolve(childExit(code, signal))),
  );
  const started = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", resolve);
  });
  if (started) {
    // As a shell says it: 127 for a command that is not there, 126 for one that cannot be run.
    return started.code === "ENOENT"
      ? { status: 127, missing: `${file}: command not found (check its name and your PATH)` }
      : { status: 126, missing: `${file}: cannot run it: ${started.message}` };
  }
  const saved = FORWARDED.map((signal) => ({ signal, listeners: process.rawListeners(signal) }));
  for (const signal of FORWARDED) {
    process.removeAllListeners(signal);
    process.on(signal, () => {
      try {
        child.kill(signal);
      } catch {
        // ended already: its exit is on its way
      }
    });
  }
  try {
    return await exited;
  } finally {
    for (const { signal, listeners } of saved) {
      process.removeAllListeners(signal);
      for (const l of listeners) process.on(signal, l as (s: NodeJS.Signals) => void);
    }
  }
}

/** The command as a shell would take it back: words quoted only where needed. */
function commandLine(command: readonly string[]): string {
  return command.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`)).join(" ");
}

const clip = (text: string): string =>
  text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 3)}...` : text;
