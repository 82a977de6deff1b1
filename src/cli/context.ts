// What every command needs: its invocation and output (Io), the global options (--home, --store,
// --workspace, given before or after the subcommand), an open Afs that is always closed again (or
// lent by the resident afs), and the workspace to act on.
import { hostname, userInfo } from "node:os";
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import type { Env } from "../core/settings.js";
import type { Afs } from "../workspace/afs.js";
import { startBuilderWhenBehind } from "./index-builder.js";
import type { Invocation } from "./invocation.js";
import { Output } from "./output.js";

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

/** What opens the engine for a command: Afs.open's options, from the invocation and its flags. */
export interface EngineRequest {
  home?: string;
  store?: string;
  env: Env;
  cwd: string;
  /** Recorded on the events the command causes (see surfaceOf). */
  surface: string;
  /** Who the changes are recorded as, when not the settings' (AFS_ACTOR, else the OS user): see actorOf. */
  actor?: string;
  /**
   * The command makes one call on the engine (an `afs fs` operation): an engine opened for it alone
   * keeps only a small text cache, unless AFS_TEXT_CACHE_MB says otherwise. Texts cached for later
   * searches that never come cost a new process its time (GC of 256 MB of strings: a third of a
   * `grep -c` over 200k files); an engine that serves many calls (the resident afs) keeps its own.
   */
  once?: boolean;
}

/** The text cache of an engine opened for one call: room for the texts a search indexes itself and then reads. */
const ONCE_TEXT_CACHE_MB = "16";

/**
 * The surface a command's changes come through, by its top-level command: the protocol servers
 * record theirs, everything else a person typed is "cli".
 */
const COMMAND_SURFACES: Readonly<Record<string, string>> = {
  mcp: "mcp",
  serve: "mcp",
  acp: "acp",
  broker: "broker",
  mount: "mount",
  "mount-run": "mount",
  run: "run",
};

export function surfaceOf(cmd: Command): string {
  let top = cmd;
  while (top.parent?.parent) top = top.parent;
  return COMMAND_SURFACES[top.name()] ?? "cli";
}

/**
 * A mount's uploads are recorded as USER@HOST (unless AFS_ACTOR names someone): a workspace mounted
 * on several machines then says on which one each change was made.
 */
export function actorOf(surface: string, env: Env): string | undefined {
  if (surface !== "mount" || env.AFS_ACTOR) return undefined;
  let user = "unknown";
  try {
    user = userInfo().username;
  } catch {}
  return `${user}@${hostname()}`;
}

/**
 * Who opens engines for commands: by default each command opens its own and closes it afterwards
 * (ownEngines); the resident afs lends the open stores it keeps between commands instead.
 */
export interface Engines {
  use<T>(request: EngineRequest, fn: (afs: Afs) => Promise<T>): Promise<T>;
  /** Closes every engine still open (on Ctrl-C, or when the resident afs leaves). */
  closeAll(): Promise<void>;
  /** Also closes what `other` holds open on closeAll (the resident afs's stores, on a signal). */
  hold?(other: { closeAll(): Promise<void> }): void;
}

/** Each command opens the engine and closes it afterwards, whatever happens. */
export function ownEngines(): Engines {
  const open = new Set<Afs>();
  const held = new Set<{ closeAll(): Promise<void> }>();
  return {
    hold(other) {
      held.add(other);
    },
    async use(request, fn) {
      // The engine loads here, not at start-up: --version and --help need none of it.
      const { Afs } = await import("../workspace/afs.js");
      const once = request.once === true && request.env.AFS_TEXT_CACHE_MB === undefined;
      const afs = await Afs.open(
        once ? { ...request, env: { ...request.env, AFS_TEXT_CACHE_MB: ONCE_TEXT_CACHE_MB } } : request,
      );
      open.add(afs);
      try {
        return await fn(afs);
      } finally {
        open.delete(afs);
        await afs.close();
      }
    },
    async closeAll() {
      await Promise.allSettled([...[...open].map((afs) => afs.close()), ...[...held].map((h) => h.closeAll())]);
    },
  };
}

/** What every command is given: its invocation, where its output goes, and how it opens the engine. */
export class Io extends Output {
  constructor(
    readonly invocation: Invocation,
    private readonly engines: Engines,
  ) {
    super(invocation);
  }

  get env(): Env {
    return this.invocation.env;
  }

  get cwd(): string {
    return this.invocation.cwd;
  }

  /** Has `other` closed with the engines, on a signal (see Engines.hold). */
  hold(other: { closeAll(): Promise<void> }): void {
    this.engines.hold?.(other);
  }

  /** A path the user typed, taken from the caller's directory. */
  path(typed: string): string {
    return resolve(this.invocation.cwd, typed);
  }

  /** Runs `fn` with the engine the command's --home and --store (or the settings) name. */
  withAfs<T>(cmd: Command, fn: (afs: Afs) => Promise<T>, options: { once?: boolean } = {}): Promise<T> {
    const { home, store } = globals(cmd);
    const { env, cwd } = this.invocation;
    const surface = surfaceOf(cmd);
    const actor = actorOf(surface, env);
    const request: EngineRequest = {
      home,
      store,
      env,
      cwd,
      surface,
      ...(actor === undefined ? {} : { actor }),
      ...(options.once ? { once: true } : {}),
    };
    return this.engines.use(request, async (afs) => {
      startBuilderWhenBehind(afs, env);
      return fn(afs);
    });
  }

  /** Like withAfs, plus the workspace from -w, $AFS_WORKSPACE or the current one. */
  withWorkspace<T>(
    cmd: Command,
    fn: (afs: Afs, workspace: string) => Promise<T>,
    options: { once?: boolean } = {},
  ): Promise<T> {
    return this.withAfs(cmd, async (afs) => fn(afs, await afs.workspaces.resolve(this.workspace(cmd))), options);
  }

  /**
   * The workspace named by -w, else by this caller's AFS_WORKSPACE (undefined: the current one). Read
   * here, per command: an engine the resident afs lends serves callers with other workspaces.
   */
  workspace(cmd: Command): string | undefined {
    return globals(cmd).workspace ?? this.invocation.env.AFS_WORKSPACE;
  }
}

/** Adds a command group to the program; its actions run with `io` (the invocation they answer). */
export type Register = (program: Command, io: Io) => void;

/**
 * The command line itself, as program.ts builds and runs it; handed to the resident afs (through
 * the daemon command) so that neither imports program.ts.
 */
export interface ProgramRunner {
  /** Runs one invocation to its exit status; engines open per command unless `engines` lends them. */
  main(invocation: Invocation, engines?: Engines): Promise<number>;
  /** The program for `io`'s command line, with only that command's module loaded. */
  buildProgram(io: Io): Promise<Command>;
}

/** On Ctrl-C or SIGTERM, close the store (rolling back anything unfinished) before leaving. */
export function closeOnSignals(engines: Engines): void {
  for (const [signal, status] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    process.once(signal, () => {
      void engines.closeAll().then(() => process.exit(status));
    });
  }
}
