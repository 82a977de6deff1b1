// Approvals in Redis: requests, decisions and revocations in three hashes under one hash tag, so
// deciding (HSETNX: the first decision stands) and revoking are single-slot scripts.
import { AfsError } from "../../core/errors.js";
import type { ApprovalRecord, ApprovalStore } from "../approvals.js";
import { arr, fields, type RedisLink, str } from "./client.js";
import type { Keys } from "./keys.js";
import { DECIDE_APPROVAL, DELETE_APPROVALS, PUT_APPROVAL, REVOKE_APPROVAL } from "./scripts.js";

export class RedisApprovals implements ApprovalStore {
  private readonly k: Keys["approvals"];

  constructor(
    private readonly link: RedisLink,
    keys: Keys,
  ) {
    this.k = keys.approvals;
  }

  async putApproval(a: { id: string; createdAt: number; request: string }): Promise<void> {
    const reply = arr(
      await this.link.run(PUT_APPROVAL, [this.k.requests, this.k.seq], [a.id, `${a.createdAt}:${a.request}`]),
    );
    if (str(reply[0] ?? null) === "EXISTS") {
      throw new AfsError("ALREADY_EXISTS", `approval ${a.id} already exists`, { approval_id: a.id });
    }
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    const [stored, decision, revoked] = await Promise.all([
      this.link.read(["HGET", this.k.requests, id]),
      this.link.read(["HGET", this.k.decisions, id]),
      this.link.read(["HGET", this.k.revocations, id]),
    ]);
    const value = str(stored);
    return value === null ? null : parse(id, value, str(decision), str(revoked)).record;
  }

  async listApprovals(): Promise<ApprovalRecord[]> {
    const [all, decided, revoked] = await Promise.all([
      this.link.read(["HGETALL", this.k.requests]),
      this.link.read(["HGETALL", this.k.decisions]),
      this.link.read(["HGETALL", this.k.revocations]),
    ]);
    const decisions = fields(decided);
    const revocations = fields(revoked);
    const parsed = [...fields(all)].map(([id, value]) =>
      parse(id, value, decisions.get(id) ?? null, revocations.get(id) ?? null),
    );
    // Like SQLite's ORDER BY created_at DESC, rowid DESC.
    parsed.sort((a, b) => b.record.createdAt - a.record.createdAt || b.n - a.n);
    return parsed.map((p) => p.record);
  }

  async decideApproval(id: string, decision: string): Promise<boolean> {
    return (await this.link.run(DECIDE_APPROVAL, [this.k.requests, this.k.decisions], [id, decision])) === 1;
  }

  async revokeApproval(id: string, at: number): Promise<boolean> {
    const keys = [this.k.requests, this.k.decisions, this.k.revocations];
    return (await this.link.run(REVOKE_APPROVAL, keys, [id, String(at)])) === 1;
  }

  async deleteApprovals(ids: readonly string[]): Promise<number> {
    const keys = [this.k.requests, this.k.decisions, this.k.revocations];
    const n = await this.link.run(DELETE_APPROVALS, keys, ids);
    return typeof n === "number" ? n : 0;
  }
}

function parse(
  id: string,
  value: string,
  decision: string | null,
  revoked: string | null,
): { n: number; record: ApprovalRecord } {
  const first = value.indexOf(":");
  const second = value.indexOf(":", first + 1);
  return {
    n: Number(value.slice(0, first)),
    record: {
      id,
      createdAt: Number(value.slice(first + 1, second)),
      request: value.slice(second + 1),
      decision,
      revokedAt: revoked === null ? null : Number(revoked),
    },
  };
}
