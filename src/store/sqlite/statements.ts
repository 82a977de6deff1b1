// The embedded store's prepared statements, created once per connection, and the row shapes they return.
import type Database from "better-sqlite3";
import type { EntryKind } from "../../core/entry.js";
import type { Hash } from "../../core/hash.js";
import type { CheckpointRecord, EventRecord, WorkspaceRecord } from "../store.js";

const CHECKPOINT_COLUMNS =
  "id, workspace, name, root, parent, created_at AS createdAt, actor, kind, description FROM checkpoints";
const WORKSPACE_COLUMNS =
  "name, description, head, revision, created_at AS createdAt, updated_at AS updatedAt FROM workspaces";
const EVENT_COLUMNS =
  "workspace, seq, op, path, old_hash AS oldHash, new_hash AS newHash, actor, surface, time FROM events";
const OVERLAY_COLUMNS = "path, kind, hash, size, mode, mtime FROM overlay";

export interface OverlayDbRow {
  path: string;
  kind: EntryKind | null;
  hash: Hash | null;
  size: number | null;
  mode: number | null;
  mtime: number | null;
}

export interface ObjectInfo {
  hash: Hash;
  createdAt: number;
  size: number;
}

export type ObjectKind = "blob" | "tree";

/** @internal better-sqlite3's statement types cannot be named in a .d.ts; the store is not public. */
export function prepare(db: Database.Database) {
  const objects = (table: "blobs" | "trees") => ({
    put: db.prepare<[Hash, number, number, Buffer]>(
      `INSERT OR IGNORE INTO ${table} (hash, size, created_at, data) VALUES (?, ?, ?, ?)`,
    ),
    get: db.prepare<[Hash], Buffer>(`SELECT data FROM ${table} WHERE hash = ?`).pluck(),
    has: db.prepare<[string], Hash>(`SELECT hash FROM ${table} WHERE hash IN (SELECT value FROM json_each(?))`).pluck(),
    list: db.prepare<[Hash, number], ObjectInfo>(
      `SELECT hash, created_at AS createdAt, size FROM ${table} WHERE hash > ? ORDER BY hash LIMIT ?`,
    ),
    delete: db.prepare<[Hash]>(`DELETE FROM ${table} WHERE hash = ?`),
  });
  return {
    blob: objects("blobs"),
    tree: objects("trees"),
    workspace: db.prepare<[string], WorkspaceRecord>(`SELECT ${WORKSPACE_COLUMNS} WHERE name = ?`),
    workspaces: db.prepare<[], WorkspaceRecord>(`SELECT ${WORKSPACE_COLUMNS} ORDER BY name`),
    revision: db.prepare<[string], number>("SELECT revision FROM workspaces WHERE name = ?").pluck(),
    head: db.prepare<[string], string>("SELECT head FROM workspaces WHERE name = ?").pluck(),
    insertWorkspace: db.prepare<[string, string, string, number, number, number]>(
      "INSERT INTO workspaces (name, description, head, revision, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    deleteWorkspace: db.prepare<[string]>("DELETE FROM workspaces WHERE name = ?"),
    advance: db.prepare<[number, number, string]>("UPDATE workspaces SET revision = ?, updated_at = ? WHERE name = ?"),
    advanceHead: db.prepare<[string, number, number, string]>(
      "UPDATE workspaces SET head = ?, revision = ?, updated_at = ? WHERE name = ?",
    ),
    checkpointById: db.prepare<[string], CheckpointRecord>(`SELECT ${CHECKPOINT_COLUMNS} WHERE id = ?`),
    checkpointByName: db.prepare<[string, string], CheckpointRecord>(
      `SELECT ${CHECKPOINT_COLUMNS} WHERE workspace = ? AND name = ?`,
    ),
    checkpoints: db.prepare<[string], CheckpointRecord>(
      `SELECT ${CHECKPOINT_COLUMNS} WHERE workspace = ? ORDER BY created_at DESC, rowid DESC`,
    ),
    insertCheckpoint: db.prepare<[string, string, string, string, string | null, number, string, string, string]>(
      "INSERT INTO checkpoints (id, workspace, name, root, parent, created_at, actor, kind, description)" +
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    deleteCheckpoint: db.prepare<[string, string]>("DELETE FROM checkpoints WHERE id = ? AND workspace = ?"),
    overlayGet: db.prepare<[string, string], OverlayDbRow>(
      `SELECT ${OVERLAY_COLUMNS} WHERE workspace = ? AND path IN (SELECT value FROM json_each(?))`,
    ),
    // Every path strictly below a directory sorts between "dir/" and "dir0" ("0" follows "/"), so
    // a range on the primary key finds them without LIKE and its wildcards.
    overlayUnder: db.prepare<[string, string, string], OverlayDbRow>(
      `SELECT ${OVERLAY_COLUMNS} WHERE workspace = ? AND path > ? AND path < ? ORDER BY path`,
    ),
    // Through overlay_children, so listing a directory costs its children, not its whole subtree.
    overlayChildren: db.prepare<[string, string], OverlayDbRow>(
      `SELECT ${OVERLAY_COLUMNS} INDEXED BY overlay_children WHERE workspace = ? AND parent = ? AND path <> parent` +
        " ORDER BY path",
    ),
    overlayCount: db.prepare<[string], number>("SELECT count(*) FROM overlay WHERE workspace = ?").pluck(),
    overlayPut: db.prepare<
      [string, string, string, EntryKind | null, Hash | null, number | null, number | null, number | null]
    >(
      "INSERT OR REPLACE INTO overlay (workspace, path, parent, kind, hash, size, mode, mtime)" +
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    overlayClearUnder: db.prepare<[string, string, string]>(
      "DELETE FROM overlay WHERE workspace = ? AND path > ? AND path < ?",
    ),
    overlayClear: db.prepare<[string]>("DELETE FROM overlay WHERE workspace = ?"),
    insertEvent: db.prepare<[string, number, string, string, Hash | null, Hash | null, string, string, number]>(
      "INSERT INTO events (workspace, seq, op, path, old_hash, new_hash, actor, surface, time)" +
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    events: db.prepare<[string, number, number], EventRecord>(
      `SELECT ${EVENT_COLUMNS} WHERE workspace = ? AND seq > ? ORDER BY seq LIMIT ?`,
    ),
    getSetting: db
      .prepare<[string, string], string>("SELECT value FROM workspace_settings WHERE workspace = ? AND key = ?")
      .pluck(),
    putSetting: db.prepare<[string, string, string]>(
      "INSERT OR REPLACE INTO workspace_settings (workspace, key, value) VALUES (?, ?, ?)",
    ),
    dropSetting: db.prepare<[string, string]>("DELETE FROM workspace_settings WHERE workspace = ? AND key = ?"),
    // Through events_by_path: a path's history costs its own events, not the whole log.
    pathEvents: db.prepare<[string, string, number, number], EventRecord>(
      `SELECT ${EVENT_COLUMNS} INDEXED BY events_by_path WHERE workspace = ? AND path = ? AND seq < ?` +
        " ORDER BY seq DESC LIMIT ?",
    ),
    checkpointRoots: db.prepare<[], Hash>("SELECT DISTINCT root FROM checkpoints").pluck(),
    overlayHashes: db.prepare<[], { kind: EntryKind; hash: Hash }>(
      "SELECT DISTINCT kind, hash FROM overlay WHERE kind IS NOT NULL",
    ),
    missingHeads: db.prepare<[], { name: string; head: string }>(
      "SELECT name, head FROM workspaces w" +
        " WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.id = w.head AND c.workspace = w.name)",
    ),
    missingRoots: db.prepare<[], { workspace: string; name: string; root: Hash }>(
      "SELECT workspace, name, root FROM checkpoints c WHERE NOT EXISTS (SELECT 1 FROM trees t WHERE t.hash = c.root)",
    ),
    missingOverlayObjects: db.prepare<[], { workspace: string; path: string; kind: EntryKind; hash: Hash }>(
      "SELECT workspace, path, kind, hash FROM overlay o WHERE" +
        " (kind = 'dir' AND NOT EXISTS (SELECT 1 FROM trees t WHERE t.hash = o.hash)) OR" +
        " (kind IN ('file', 'symlink') AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.hash = o.hash))",
    ),
  };
}

export type Statements = ReturnType<typeof prepare>;
