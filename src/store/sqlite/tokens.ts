// The token table of the SQLite store: its schema migration and statements, kept apart from the
// workspace tables so sqlite.ts only wires them in.
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import type { TokenRecord } from "../tokens.js";

/** Schema version 2. */
export const TOKENS_MIGRATION = `
  CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    workspace TEXT,
    profile TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER,
    actor TEXT NOT NULL
  );
`;

const COLUMNS =
  "id, name, secret_hash AS secretHash, workspace, profile, created_at AS createdAt, expires_at AS expiresAt," +
  " revoked_at AS revokedAt, actor FROM tokens";

/** Synchronous token operations on one connection; the store wraps them in its error guard. */
export function tokenStatements(db: Database.Database) {
  const insert = db.prepare<
    [string, string, string, string | null, string, number, number | null, number | null, string]
  >(
    "INSERT INTO tokens (id, name, secret_hash, workspace, profile, created_at, expires_at, revoked_at, actor)" +
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const get = db.prepare<[string], TokenRecord>(`SELECT ${COLUMNS} WHERE id = ?`);
  const all = db.prepare<[], TokenRecord>(`SELECT ${COLUMNS} ORDER BY created_at DESC, rowid DESC`);
  const revoke = db.prepare<[number, string]>("UPDATE tokens SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?");
  return {
    put(t: TokenRecord): void {
      if (get.get(t.id)) throw new AfsError("ALREADY_EXISTS", `token ${t.id} already exists`, { token_id: t.id });
      insert.run(t.id, t.name, t.secretHash, t.workspace, t.profile, t.createdAt, t.expiresAt, t.revokedAt, t.actor);
    },
    get: (id: string): TokenRecord | null => get.get(id) ?? null,
    list: (): TokenRecord[] => all.all(),
    revoke: (id: string, at: number): boolean => revoke.run(at, id).changes > 0,
  };
}
