// The approval part of the Store contract, and the queue over it: every Store keeps requests the
// same way (newest first, the first decision stands, revocation sticks), and a process waiting on
// one connection hears a decision recorded through another within a second.
import { spawnSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { ApprovalQueue, MAX_DIFF_BYTES } from "../../src/access/approval-queue.js";
import { isAfsError } from "../../src/core/errors.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import { type Skip, skippable } from "./skip.js";
import type { StoreFactory } from "./store-contract.js";

export function approvalStoreContract(name: string, factory: StoreFactory, options: { skip?: Skip[] } = {}): void {
  const it = skippable(options.skip);
  describe(`ApprovalStore contract: ${name}`, () => {
    let t: Awaited<ReturnType<StoreFactory>>;
    /** A second connection to the same store: another process, as far as the store can tell. */
    let other: Store;
    beforeEach(async () => {
      t = await factory();
      other = await openStore(t.store.url);
    });
    afterEach(async () => {
      await other.close();
      await t.cleanup();
    });

    it("stores requests, lists them newest first, and refuses a taken id", async () => {
      await t.store.putApproval({ id: "a", createdAt: 1000, request: '{"x":1}' });
      await t.store.putApproval({ id: "b", createdAt: 2000, request: '{"x":2}' });
      await t.store.putApproval({ id: "c", createdAt: 2000, request: '{"x":3}' });
      expect(await t.store.getApproval("a")).toEqual({
        id: "a",
        createdAt: 1000,
        request: '{"x":1}',
        decision: null,
        revokedAt: null,
      });
      expect(await t.store.getApproval("zz")).toBeNull();
      expect((await other.listApprovals()).map((a) => a.id)).toEqual(["c", "b", "a"]);
      await expect(t.store.putApproval({ id: "a", createdAt: 5, request: "{}" })).rejects.toMatchObject({
        code: "ALREADY_EXISTS",
      });
    });

    it("keeps the first decision and the first revocation; revokes only what was decided", async () => {
      await t.store.putApproval({ id: "a", createdAt: 1000, request: "{}" });
      expect(await t.store.revokeApproval("a", 10)).toBe(false);
      expect(await other.decideApproval("a", '"yes"')).toBe(true);
      expect(await t.store.decideApproval("a", '"no"')).toBe(false);
      expect(await t.store.decideApproval("missing", '"no"')).toBe(false);
      expect((await t.store.getApproval("a"))?.decision).toBe('"yes"');
      expect(await t.store.revokeApproval("a", 3000)).toBe(true);
      expect(await other.revokeApproval("a", 4000)).toBe(true);
      expect((await t.store.getApproval("a"))?.revokedAt).toBe(3000);
      expect(await t.store.revokeApproval("missing", 3000)).toBe(false);
    });

    it("deletes requests with their decisions", async () => {
      await t.store.putApproval({ id: "a", createdAt: 1, request: "{}" });
      await t.store.putApproval({ id: "b", createdAt: 2, request: "{}" });
      await t.store.decideApproval("a", "{}");
      expect(await t.store.deleteApprovals(["a", "missing"])).toBe(1);
      expect(await t.store.deleteApprovals([])).toBe(0);
      expect((await t.store.listApprovals()).map((a) => a.id)).toEqual(["b"]);
      expect(await t.store.getApproval("a")).toBeNull();
    });

    const ask = (over: Partial<Parameters<ApprovalQueue["submit"]>[0]> = {}) => ({
      kind: "consent" as const,
      title: "files for fixture",
      message: "index the project",
      process: "afs broker",
      agent: "fixture",
      roots: ["project"],
      paths: ["project/src", "project/docs"],
      ...over,
    });

    it("queue: a waiting request resumes within a second of a decision made through another connection", async () => {
      const asker = new ApprovalQueue(t.store);
      const consoleSide = new ApprovalQueue(other);
      const id = await asker.submit(ask());
      const waiting = asker.wait(id);
      const list = await consoleSide.list();
      expect(list.pending.map((p) => [p.id, p.paths, p.state])).toEqual([
        [id, ["project/src", "project/docs"], "pending"],
      ]);
      await new Promise((r) => setTimeout(r, 300));
      const decided = Date.now();
      await consoleSide.decide(id, { allow: ["project/src"], note: "src only", by: "alice" });
      const decision = await waiting;
      expect(Date.now() - decided).toBeLessThan(1000);
      expect(decision).toMatchObject({
        outcome: "allowed",
        paths: ["project/src"],
        grant: true,
        note: "src only",
        by: "alice",
      });
      // Broker consent leaves a grant, listed until it is revoked, and the asker sees the revocation at once.
      expect((await consoleSide.list()).grants.map((g) => g.id)).toEqual([id]);
      expect(await asker.grantStands(id)).toBe(true);
      await consoleSide.revokeGrant(id);
      expect(await asker.grantStands(id)).toBe(false);
      const after = await consoleSide.list();
      expect(after.grants).toEqual([]);
      expect(after.recent.map((r) => r.id)).toEqual([id]);
      await expect(consoleSide.revokeGrant(id)).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("queue: deny, a second decision, paths never asked, and writes that leave no grant", async () => {
      const q = new ApprovalQueue(t.store, { pollMs: 50 });
      const id = await q.submit(ask({ kind: "write", paths: ["/p/a.txt"], diff: "+x\n" }));
      await expect(q.decide(id, { allow: ["/etc/passwd"], by: "bob" })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
      await q.decide(id, { allow: false, note: "no", by: "bob" });
      expect(await q.wait(id)).toMatchObject({ outcome: "denied", paths: [], grant: false, note: "no" });
      await expect(q.decide(id, { allow: "all", by: "carol" })).rejects.toMatchObject({ code: "CONFLICT" });
      const w = await q.submit(ask({ kind: "write", paths: ["/p/b.txt"] }));
      await q.decide(w, { allow: "all", by: "bob" });
      expect((await q.wait(w)).grant).toBe(false);
      const s = await q.submit(ask({ kind: "write", paths: ["/p/c.txt"] }));
      await q.decide(s, { allow: "all", grant: true, by: "bob" });
      expect((await q.list()).grants.map((g) => g.id)).toEqual([s]);
      await expect(q.decide("missing", { allow: false, by: "bob" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("queue: expiry and cancellation settle the request with a clear error; a late decision is refused", async () => {
      const q = new ApprovalQueue(t.store, { pollMs: 50 });
      const { id, error } = await q.submit(ask({ timeoutMs: 200 })).then(async (id) => ({
        id,
        error: await q.wait(id).catch((e: unknown) => e),
      }));
      expect(isAfsError(error) && error.code).toBe("TIMEOUT");
      expect(String((error as Error).message)).toMatch(/nobody decided in the afs console/);
      await expect(q.decide(id, { allow: "all", by: "late" })).rejects.toMatchObject({ code: "CONFLICT" });
      expect((await q.get(id)).state).toBe("expired");

      const c = new AbortController();
      const id2 = await q.submit(ask());
      const waiting = q.wait(id2, c.signal).catch((e: unknown) => e);
      c.abort();
      expect(await waiting).toMatchObject({ code: "TIMEOUT" });
      expect((await q.get(id2)).state).toBe("cancelled");
      expect((await q.list()).pending).toEqual([]);
    });

    it("queue: what a killed process of this machine left (a waiting request, a grant) is settled for it", async () => {
      const q = new ApprovalQueue(t.store);
      const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
      const leave = async (id: string) => {
        const mine = await q.get(await q.submit(ask()));
        const { id: _id, createdAt, state: _s, decision: _d, revokedAt: _r, ...request } = mine;
        await t.store.putApproval({ id, createdAt, request: JSON.stringify({ ...request, pid: dead }) });
        await q.cancel(mine.id);
      };
      await leave("waiting");
      await leave("granted");
      await q.decide("granted", { allow: "all", by: "alice" });
      const list = await q.list();
      expect(list.pending).toEqual([]);
      expect(list.grants).toEqual([]);
      expect((await q.get("waiting")).state).toBe("cancelled");
      expect((await q.get("granted")).revokedAt).not.toBeNull();
    });

    it("queue: a large diff is cut at a line boundary and marked", async () => {
      const q = new ApprovalQueue(t.store);
      const line = `+${"x".repeat(99)}\n`;
      const id = await q.submit(ask({ kind: "write", paths: ["/p/big"], diff: line.repeat(2000) }));
      const v = await q.get(id);
      expect(v.diffTruncated).toBe(true);
      expect(Buffer.byteLength(v.diff ?? "")).toBeLessThanOrEqual(MAX_DIFF_BYTES);
      expect(v.diff?.endsWith("\n")).toBe(true);
    });
  });
}
