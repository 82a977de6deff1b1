// What every command needs: the global options (--home, --store, --workspace, given before or
// after the subcommand), an open Afs that is always closed again, and the workspace to act on.
import { type Command, Option } from "commander";
import type { Afs } from "../workspace/afs.js";

export interface GlobalOptions {
  home?: string;
  store?: string;
  workspace?: string;
}

/** The global options, repeated (hidden) on every leaf so they also work after its arguments. */
export function globalOptions(cmd: Command, hidden = false): Command {
  const home = new Option("--home <dir>", "data directory (default: $AFS_HOME or ~/.afs)");
  const store = new Option("--store <url>", "store URL (default: $AFS_STORE or sqlite:<home>/afs.db)");
  return cmd.addOption(hidden ? home.hideHelp() : home).addOption(hidden ? store.hideHelp() : store);
}

/** Adds -w/--workspace to a workspace-scoped command (`short` false where -w means something else). */
export function workspaceOption(cmd: Command, short = true): Command {
  return cmd.option(
    short ? "-w, --workspace <name>" : "--workspace <name>",
    "workspace to act on (default: $AFS_WORKSPACE or the one chosen with afs ws use)",
  );
}

/** Options from the command and its ancestors; the value nearest the command wins. */
export function globals(cmd: Command): GlobalOptions {
  const out: GlobalOptions = {};
  for (let c: Command | null = cmd; c; c = c.parent) {
    const o = c.opts<GlobalOptions>();
    out.home ??= o.home;
    out.store ??= o.store;
    out.workspace ??= o.workspace;
  }
  return out;
}

const open = new Set<Afs>();

/** In the resident afs: the open stores commands borrow (and leave open) instead of opening their own. */
export interface AfsLender {
  borrow(options: { home?: string; store?: string }): Promise<Afs>;
  closeAll(): Promise<void>;
}

let lender: AfsLender | undefined;

export function lendAfs(to: AfsLender): void {
  lender = to;
}

/** Opens the engine for one command and closes it afterwards, whatever happens. */
export async function withAfs<T>(cmd: Command, fn: (afs: Afs) => Promise<T>): Promise<T> {
  const { home, store } = globals(cmd);
  if (lender) return fn(await lender.borrow({ home, store }));
  // The engine loads here, not at start-up: --version and --help need none of it.
  const { Afs } = await import("../workspace/afs.js");
  const afs = await Afs.open({ home, store });
  open.add(afs);
  try {
    return await fn(afs);
  } finally {
    open.delete(afs);
    await afs.close();
  }
}

/** Like withAfs, plus the workspace from -w, $AFS_WORKSPACE or the current one. */
export function withWorkspace<T>(cmd: Command, fn: (afs: Afs, workspace: string) => Promise<T>): Promise<T> {
  return withAfs(cmd, async (afs) => fn(afs, await afs.workspaces.resolve(globals(cmd).workspace)));
}

/** On Ctrl-C or SIGTERM, close the store (rolling back anything unfinished) before leaving. */
export function closeOnSignals(): void {
  for (const [signal, status] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      void Promise.allSettled([...[...open].map((afs) => afs.close()), lender?.closeAll()]).then(() =>
        process.exit(status),
      );
    });
  }
}
