// `afs.approvals`: the requests waiting for a person, as the store keeps them, so a console on any
// process or machine sharing the store sees and answers them. What a request holds, how a process
// waits and what a grant allows live in access/approval-queue.ts.
import type { ApprovalRecord, ApprovalStore } from "../../store/approvals.js";
import type { Engine } from "./engine.js";

export type { ApprovalRecord };

/** What access/approval-queue.ts needs from the engine: the store's approval records, nothing else. */
export type ApprovalRegistry = ApprovalStore;

export class ApprovalRecords implements ApprovalRegistry {
  constructor(private readonly engine: Engine) {}

  putApproval(approval: { id: string; createdAt: number; request: string }): Promise<void> {
    return this.engine.store.putApproval(approval);
  }

  getApproval(id: string): Promise<ApprovalRecord | null> {
    return this.engine.store.getApproval(id);
  }

  listApprovals(): Promise<ApprovalRecord[]> {
    return this.engine.store.listApprovals();
  }

  decideApproval(id: string, decision: string): Promise<boolean> {
    return this.engine.store.decideApproval(id, decision);
  }

  revokeApproval(id: string, at: number): Promise<boolean> {
    return this.engine.store.revokeApproval(id, at);
  }

  deleteApprovals(ids: readonly string[]): Promise<number> {
    return this.engine.store.deleteApprovals(ids);
  }
}
