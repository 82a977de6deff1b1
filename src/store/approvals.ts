// Requests waiting for a person, as the Store keeps them, so a process asking on one machine hears
// the answer given in a console on another. The store holds each request and decision as opaque
// JSON text (their shape belongs to access/approval-queue.ts) and guarantees only the races: the
// first decision recorded stands, and so does the first revocation of the grant it made.

export interface ApprovalRecord {
  id: string;
  createdAt: number;
  /** The request as the asking process wrote it (JSON). */
  request: string;
  /** The decision (JSON) once one was recorded; null while the request waits. */
  decision: string | null;
  /** When the grant the decision made was revoked (the first revocation stands); null while it holds. */
  revokedAt: number | null;
}

export interface ApprovalStore {
  /** Stores a waiting request; ALREADY_EXISTS when the id is taken. */
  putApproval(approval: { id: string; createdAt: number; request: string }): Promise<void>;
  getApproval(id: string): Promise<ApprovalRecord | null>;
  /** Newest first. */
  listApprovals(): Promise<ApprovalRecord[]>;
  /** Records the decision unless one was recorded first; false when the request is absent or already decided. */
  decideApproval(id: string, decision: string): Promise<boolean>;
  /** Marks a decided request's grant revoked (keeping the first time); false when absent or undecided. */
  revokeApproval(id: string, at: number): Promise<boolean>;
  /** Removes requests (those absent are skipped); returns how many went. */
  deleteApprovals(ids: readonly string[]): Promise<number>;
}
