// The embedded store's tables, as numbered migrations recorded in PRAGMA user_version.
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import { APPROVALS_MIGRATION } from "./approvals.js";
import { CHUNKS_MIGRATION } from "./blobs.js";
import { TEMPLATES_MIGRATION } from "./templates.js";
import { TOKENS_MIGRATION } from "./tokens.js";

/**
 * Schema versions, applied in order and recorded in PRAGMA user_version. Never edit a shipped
 * entry; append a new one. Object tables keep `data` last so listing them never reads the bytes.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE blobs (hash TEXT PRIMARY KEY, size INTEGER NOT NULL, created_at INTEGER NOT NULL, data BLOB NOT NULL);
  CREATE TABLE trees (hash TEXT PRIMARY KEY, size INTEGER NOT NULL, created_at INTEGER NOT NULL, data BLOB NOT NULL);
  CREATE TABLE workspaces (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    head TEXT NOT NULL REFERENCES checkpoints(id) DEFERRABLE INITIALLY DEFERRED,
    revision INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX workspaces_head ON workspaces(head);
  CREATE TABLE checkpoints (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    root TEXT NOT NULL,
    parent TEXT,
    created_at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    kind TEXT NOT NULL,
    description TEXT NOT NULL,
    UNIQUE (workspace, name)
  );
  CREATE INDEX checkpoints_by_time ON checkpoints(workspace, created_at);
  CREATE TABLE overlay (
    workspace TEXT NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
    path TEXT NOT NULL,
    parent TEXT NOT NULL,
    kind TEXT,
    hash TEXT,
    size INTEGER,
    mode INTEGER,
    mtime INTEGER,
    PRIMARY KEY (workspace, path)
  ) WITHOUT ROWID;
  CREATE INDEX overlay_children ON overlay(workspace, parent);
  CREATE TABLE events (
    workspace TEXT NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    op TEXT NOT NULL,
    path TEXT NOT NULL,
    old_hash TEXT,
    new_hash TEXT,
    actor TEXT NOT NULL,
    time INTEGER NOT NULL,
    PRIMARY KEY (workspace, seq)
  ) WITHOUT ROWID;
  `,
  TOKENS_MIGRATION,
  CHUNKS_MIGRATION,
  TEMPLATES_MIGRATION,
  // Which surface each change came through; older events read as unknown.
  "ALTER TABLE events ADD COLUMN surface TEXT NOT NULL DEFAULT 'unknown';",
  // One path's history without reading the whole log (afs fs history, undelete, restore).
  "CREATE INDEX events_by_path ON events(workspace, path, seq);",
  `CREATE TABLE workspace_settings (
    workspace TEXT NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (workspace, key)
  ) WITHOUT ROWID;`,
  // Requests waiting for a person (afs broker --consent console, afs acp --approve console).
  APPROVALS_MIGRATION,
];

/** Brings the schema up to date inside one write transaction, so concurrent openers migrate once. */
export function migrate(db: Database.Database, file: string): void {
  const version = (): number => db.pragma("user_version", { simple: true }) as number;
  const check = (v: number): void => {
    if (v > MIGRATIONS.length) {
      throw new AfsError(
        "IO_ERROR",
        `the afs store at ${file} has schema version ${v}, newer than this afs understands (${MIGRATIONS.length}); upgrade afs`,
        { path: file },
      );
    }
  };
  const current = version();
  check(current);
  if (current === MIGRATIONS.length) return;
  db.transaction(() => {
    const from = version();
    check(from);
    for (const sql of MIGRATIONS.slice(from)) db.exec(sql);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
}
