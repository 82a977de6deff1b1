// The afs engine: open a home, then use its parts, each a small object of its own (Kysely's
// `db.schema` style): workspaces, checkpoints, events, history, tokens, mounts, indexes, maintenance.
// Every surface (CLI, MCP, ACP, HTTP) talks to these parts and the ops, never to the store.
import { userInfo } from "node:os";
import { type Env, readSettings, type Settings, storeUrlFrom } from "../core/settings.js";
import { openStore } from "../store/open.js";
import { locate } from "./config.js";
import { ApprovalRecords } from "./engine/approvals.js";
import { Checkpoints } from "./engine/checkpoints.js";
import { createEngine, type Engine } from "./engine/engine.js";
import { Events } from "./engine/events.js";
import { History } from "./engine/history.js";
import { Indexes } from "./engine/indexes.js";
import { registerEngine } from "./engine/internals.js";
import { Maintenance, type MigrateReport, migrateStores } from "./engine/maintenance.js";
import { Mounts } from "./engine/mounts.js";
import { Tokens } from "./engine/tokens.js";
import { Workspaces } from "./engine/workspaces.js";
import type { MigrateOptions } from "./migrate.js";
import { EMPTY_TREE, EMPTY_TREE_DATA } from "./tree.js";
import { VERSION } from "./version.js";

export type { ApprovalRecord, ApprovalRegistry } from "./engine/approvals.js";
export type { DiffResult } from "./engine/checkpoints.js";
export type { EventFilter, EventFollower, EventPage, EventRecord } from "./engine/events.js";
export type {
  FileVersion,
  PolicyChange,
  RestoreResult,
  VersionContent,
  VersionDiff,
  VersioningPolicy,
  VersionPage,
} from "./engine/history.js";
export type { MigrateReport } from "./engine/maintenance.js";
export type { SyncChange, SyncCommitResult, SyncOutcome } from "./engine/mounts.js";
export type { TokenRecord, TokenRegistry } from "./engine/tokens.js";
export type { ExportResult } from "./engine/workspaces.js";
export { Checkpoints, Events, History, Indexes, Maintenance, Mounts, Tokens, VERSION, Workspaces };

export interface AfsOptions {
  /** Data directory; default AFS_HOME or ~/.afs. */
  home?: string;
  /** Store URL; default AFS_STORE or sqlite:<home>/afs.db. */
  store?: string;
  /** Recorded on events and checkpoints; default AFS_ACTOR, else the OS user. */
  actor?: string;
  /**
   * Recorded beside the actor on every event: which way into afs changes come ("cli", "mcp",
   * "acp", "broker", "mount"…); default "engine". A volume may name its own (workspaces.volume).
   */
  surface?: string;
  /** Where the AFS_* settings come from, read once here; default this process's environment. */
  env?: Env;
  /** The directory a relative home or SQLite store path is taken from; default this process's. */
  cwd?: string;
}

export class Afs {
  readonly workspaces: Workspaces;
  readonly checkpoints: Checkpoints;
  readonly events: Events;
  readonly history: History;
  readonly tokens: Tokens;
  readonly indexes: Indexes;
  readonly maintenance: Maintenance;
  readonly mounts: Mounts;
  /** Requests waiting for a person (access/approval-queue.ts reads and answers them). */
  readonly approvals: ApprovalRecords;
  readonly #engine: Engine;

  private constructor(engine: Engine) {
    this.#engine = engine;
    this.workspaces = new Workspaces(engine);
    this.checkpoints = new Checkpoints(engine);
    this.events = new Events(engine);
    this.history = new History(engine, this.workspaces);
    this.tokens = new Tokens(engine);
    this.indexes = new Indexes(engine, this.workspaces);
    this.maintenance = new Maintenance(engine, this.workspaces);
    this.mounts = new Mounts(engine);
    this.approvals = new ApprovalRecords(engine);
    registerEngine(this, engine);
  }

  static async open(options: AfsOptions = {}): Promise<Afs> {
    // The library's default: the one place below the CLI that reads this process's environment.
    const cwd = options.cwd ?? process.cwd();
    const settings = readSettings(options.env ?? process.env, cwd);
    const { home, store: url } = locate(settings, cwd, options);
    const store = await openStore(url, { env: settings.env });
    try {
      // Every new directory points at the empty tree; keeping it stored makes that always valid.
      await store.putTrees([{ hash: EMPTY_TREE, data: EMPTY_TREE_DATA }]);
      return new Afs(
        createEngine(
          home,
          store,
          { actor: options.actor ?? settings.actor ?? safeUser(), surface: options.surface ?? "engine" },
          settings,
          cwd,
        ),
      );
    } catch (e) {
      await store.close().catch(() => undefined);
      throw e;
    }
  }

  /**
   * Copies workspaces with their whole history, and the tokens, from the store at `from` (only
   * read) to the store at `to`, then checks the target like fsck (`afs migrate`). Relative SQLite
   * paths are taken from `cwd`, a Redis password may come from `env` (defaults as for open).
   */
  static migrate(
    from: string,
    to: string,
    options: MigrateOptions & { env?: Env; cwd?: string } = {},
  ): Promise<MigrateReport> {
    const { env, cwd, ...rest } = options;
    const here = cwd ?? process.cwd();
    const settings = readSettings(env ?? process.env, here);
    return migrateStores(storeUrlFrom(from, here), storeUrlFrom(to, here), settings.env, rest);
  }

  /** What this engine read from its environment when it opened; nothing below reads process.env. */
  get settings(): Settings {
    return this.#engine.settings;
  }

  /** The data directory. */
  get home(): string {
    return this.#engine.home;
  }

  /**
   * The store's URL as opened, password included: for handing this same store to a child process
   * of the same user. Show `maintenance.status().store` (masked) to people instead.
   */
  get storeUrl(): string {
    return this.#engine.store.url;
  }

  async close(): Promise<void> {
    try {
      await this.#engine.search.close();
    } finally {
      this.mounts.close();
      await this.#engine.store.close();
    }
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "unknown";
  }
}
