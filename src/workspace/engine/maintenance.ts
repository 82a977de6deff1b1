// `afs.maintenance`: keeping a store healthy and moving it: gc, fsck, status, migrate to another
// store, and whether the store file this engine opened is still the one on disk.
import { statSync } from "node:fs";
import { type Env, storeUrlFrom } from "../../core/settings.js";
import { openStore } from "../../store/open.js";
import type { Store } from "../../store/store.js";
import { maskStoreUrl } from "../../store/url.js";
import type { FsckResult } from "../gc.js";
import type { MigrateOptions, MigrateResult } from "../migrate.js";
import { VERSION } from "../version.js";
import type { Engine } from "./engine.js";
import type { Workspaces } from "./workspaces.js";

export interface MigrateReport extends MigrateResult {
  /** The stores' URLs as opened (passwords included: they were given by the caller). */
  from: string;
  to: string;
}

/**
 * Copies workspaces with their whole history, and the tokens, from the store at `from` (only
 * read) into the store at `to` (a new SQLite file is created), then checks the target like fsck.
 */
export async function migrateStores(
  from: string,
  to: string,
  env: Env,
  options: MigrateOptions = {},
): Promise<MigrateReport> {
  // The source is only read: a path that names no store is a mistake, not a new empty store.
  const source = await openStore(from, { env, existing: true });
  try {
    return await migrateInto(source, to, env, options);
  } finally {
    await source.close().catch(() => undefined);
  }
}

async function migrateInto(source: Store, to: string, env: Env, options: MigrateOptions): Promise<MigrateReport> {
  const target = await openStore(to, { env });
  try {
    const { migrate } = await import("../migrate.js");
    return { ...(await migrate(source, target, options)), from: source.url, to: target.url };
  } finally {
    await target.close().catch(() => undefined);
  }
}

/** A SQLite store file's device and inode ("" for other stores, "gone" when deleted). */
function fileIdentity(url: string): string {
  const sqlite = /^sqlite:(.*)$/.exec(url);
  if (!sqlite) return "";
  const st = statSync(sqlite[1] as string, { throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}` : "gone";
}

export class Maintenance {
  private readonly opened: string;

  constructor(
    private readonly engine: Engine,
    private readonly workspaces: Workspaces,
  ) {
    this.opened = fileIdentity(engine.store.url);
  }

  /**
   * Deletes what nothing uses, and the search index rows of blobs gone from the store; with
   * `repack`, then re-encodes what is left that was stored in an older format (Store.repack),
   * after the sweep so no time goes on values about to be deleted.
   */
  async gc(options: { graceMs?: number; repack?: boolean } = {}) {
    const { store, trees, search } = this.engine;
    const { collectGarbage, DEFAULT_GC_GRACE_MS } = await import("../gc.js");
    const result = await collectGarbage(store, trees, options.graceMs ?? DEFAULT_GC_GRACE_MS, (deleted) =>
      search.prune(deleted),
    );
    if (options.repack) result.repacked = await store.repack();
    return result;
  }

  async fsck(): Promise<FsckResult> {
    const { checkStore } = await import("../gc.js");
    return checkStore(this.engine.store, this.engine.trees);
  }

  async status() {
    const workspaces = await this.engine.store.listWorkspaces();
    return {
      version: VERSION,
      home: this.engine.home,
      // A password in the URL (redis://user:pass@…) is never shown.
      store: maskStoreUrl(this.engine.store.url),
      current_workspace: await this.workspaces.current(),
      workspaces: workspaces.length,
    };
  }

  /** Copies this engine's workspaces (with their history) and tokens into the store at `to` (a relative SQLite path: from the directory the engine was opened in). */
  migrate(to: string, options: MigrateOptions = {}): Promise<MigrateReport> {
    return migrateInto(this.engine.store, storeUrlFrom(to, this.engine.cwd), this.engine.settings.env, options);
  }

  /**
   * True when the SQLite file this engine opened was deleted or replaced since (a restore from a
   * backup, a test's fresh home): a long-lived process should open a new engine then.
   */
  storeReplaced(): boolean {
    return fileIdentity(this.engine.store.url) !== this.opened;
  }
}
