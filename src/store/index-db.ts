// The search indexes' own SQLite file. Everything in it is derived from blobs and keyed by their
// content hash, so it is a cache that can never go stale: delete the file and it is rebuilt.
// It sits beside the store (afs.db → afs.index.db) so indexing never contends with workspace commits.
import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type Database from "better-sqlite3";
import { makeDirectory } from "./make-dir.js";
import { openDatabase } from "./sqlite/driver.js";
import { useWal } from "./sqlite/wal.js";

const BUSY_TIMEOUT_MS = 10_000;

export class IndexDb {
  private constructor(
    /** @internal better-sqlite3's types stay out of the package's .d.ts (its @types are a devDependency). */
    readonly db: Database.Database,
    readonly path: string,
  ) {}

  static open(path: string): IndexDb {
    const file = resolve(path);
    makeDirectory(dirname(file), `the search index ${file}`);
    const db = openDatabase(file, { timeout: BUSY_TIMEOUT_MS });
    useWal(db, BUSY_TIMEOUT_MS);
    db.pragma("synchronous = NORMAL");
    db.exec("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
    return new IndexDb(db, file);
  }

  /**
   * Brings one component's tables to the newest version: `steps[i]` migrates version i to i + 1.
   * Components (text index, passages, vectors) version their tables independently.
   */
  ensureSchema(component: string, steps: readonly string[]): void {
    const version = (): number =>
      (this.db.prepare("SELECT version FROM schema_versions WHERE component = ?").pluck().get(component) as
        | number
        | undefined) ?? 0;
    // Up to date (every process but the first after an upgrade): no write lock, which a writer
    // indexing in another process may hold for a while, and no write on every open.
    if (version() === steps.length) return;
    this.db
      .transaction(() => {
        const from = version();
        if (from > steps.length) {
          throw new Error(
            `${this.path} holds ${component} tables of version ${from}, newer than this afs knows (${steps.length}); delete the file to rebuild the index or upgrade afs`,
          );
        }
        for (let v = from; v < steps.length; v++) this.db.exec(steps[v] as string);
        this.db
          .prepare(
            "INSERT INTO schema_versions (component, version) VALUES (?, ?) ON CONFLICT DO UPDATE SET version = ?",
          )
          .run(component, steps.length, steps.length);
      })
      .immediate();
  }

  /** Bytes on disk, the write-ahead log and its index included. */
  bytes(): number {
    let total = 0;
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        total += statSync(this.path + suffix).size;
      } catch {
        // a side file that is not there holds nothing
      }
    }
    return total;
  }

  close(): void {
    this.db.close();
  }
}

/**
 * One component's prepared statements, made on first use once its tables are up to date, so a
 * process that never searches never opens the index file.
 * @internal better-sqlite3's types stay out of the package's .d.ts.
 */
export function componentStatements<S>(
  open: () => IndexDb,
  component: string,
  schema: readonly string[],
  prepare: (db: Database.Database) => S,
): () => S {
  let statements: S | undefined;
  return () => {
    if (statements === undefined) {
      const index = open();
      index.ensureSchema(component, schema);
      statements = prepare(index.db);
    }
    return statements;
  };
}

/** Where the index lives for a store: beside a SQLite store's file, else in AFS_HOME. */
export function indexDbPath(storeUrl: string, home: string): string {
  const sqlite = /^sqlite:(.*)\.db$/.exec(storeUrl);
  return sqlite ? `${sqlite[1]}.index.db` : join(home, "index.db");
}
