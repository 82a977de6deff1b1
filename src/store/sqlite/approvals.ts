// The approvals table of the SQLite store: its migration and statements, apart from the workspace
// tables so store.ts only wires them in. A decision is recorded only where none is (decision IS NULL).
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import type { ApprovalRecord } from "../approvals.js";

export const APPROVALS_MIGRATION = `
  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    request TEXT NOT NULL,
    decision TEXT,
    revoked_at INTEGER
  );
`;

const COLUMNS = "id, created_at AS createdAt, request, decision, revoked_at AS revokedAt FROM approvals";

/** Synchronous approval operations on one connection; the store wraps them in its error guard. */
export function approvalStatements(db: Database.Database) {
  const insert = db.prepare<[string, number, string]>(
    "INSERT INTO approvals (id, created_at, request) VALUES (?, ?, ?)",
  );
  const get = db.prepare<[string], ApprovalRecord>(`SELECT ${COLUMNS} WHERE id = ?`);
  const all = db.prepare<[], ApprovalRecord>(`SELECT ${COLUMNS} ORDER BY created_at DESC, rowid DESC`);
  const decide = db.prepare<[string, string]>("UPDATE approvals SET decision = ? WHERE id = ? AND decision IS NULL");
  const revoke = db.prepare<[number, string]>(
    "UPDATE approvals SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? AND decision IS NOT NULL",
  );
  const remove = db.prepare<[string]>("DELETE FROM approvals WHERE id = ?");
  const removeAll = db.transaction((ids: readonly string[]) => ids.reduce((n, id) => n + remove.run(id).changes, 0));
  return {
    put(a: { id: string; createdAt: number; request: string }): void {
      if (get.get(a.id)) throw new AfsError("ALREADY_EXISTS", `approval ${a.id} already exists`, { approval_id: a.id });
      insert.run(a.id, a.createdAt, a.request);
    },
    get: (id: string): ApprovalRecord | null => get.get(id) ?? null,
    list: (): ApprovalRecord[] => all.all(),
    decide: (id: string, decision: string): boolean => decide.run(decision, id).changes > 0,
    revoke: (id: string, at: number): boolean => revoke.run(at, id).changes > 0,
    delete: (ids: readonly string[]): number => removeAll.immediate(ids),
  };
}
