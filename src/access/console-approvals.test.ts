import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { openStore } from "../store/open.js";
import { ApprovalQueue } from "./approval-queue.js";
import { Approvals } from "./approvals.js";
import { consoleApprovals, consoleConsent } from "./console-approvals.js";

const canonical = (p: string): string | null => p;
const request = (paths: string[]) => ({ server: "srv", message: "m", paths, hostPaths: paths.map(() => null) });

/** A real SQLite store in a temp dir, the asker's queue, and a console's queue on its own connection. */
async function setup() {
  const { dir, cleanup } = await tempDir();
  const url = `sqlite:${dir}/afs.db`;
  const asker = await openStore(url);
  const console = await openStore(url);
  return {
    queue: new ApprovalQueue(asker, { pollMs: 20 }),
    person: new ApprovalQueue(console),
    done: async () => {
      await asker.close();
      await console.close();
      await cleanup();
    },
  };
}

const pendingOf = async (q: ApprovalQueue) => {
  for (;;) {
    const [first] = (await q.list()).pending;
    if (first) return first;
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("console consent", () => {
  it("grants what the person allowed under the request's id; a revocation in the console applies at once and is heard", async () => {
    const t = await setup();
    const waiting: string[] = [];
    const consent = consoleConsent(t.queue, {
      process: "afs broker",
      onWaiting: (id) => waiting.push(id),
      watchMs: 20,
    });
    try {
      const deciding = consent.decide(request(["p/src", "p/docs"]), canonical);
      const asked = await pendingOf(t.person);
      expect(asked).toMatchObject({ kind: "consent", agent: "srv", roots: ["p"], paths: ["p/src", "p/docs"] });
      expect(waiting).toEqual([asked.id]);
      await t.person.decide(asked.id, { allow: ["p/src"], by: "alice" });
      const decision = await deciding;
      expect(decision).toEqual({ approved: [{ path: "p/src", mode: "write" }], grantId: asked.id });
      expect(await consent.permits?.("p/src/a.ts", "write", canonical)).toBe(true);
      expect(await consent.permits?.("p/docs/a.md", "read", canonical)).toBe(false);
      let heard = 0;
      consent.onChange?.(() => heard++);
      await t.person.revokeGrant(asked.id);
      expect(await consent.permits?.("p/src/a.ts", "write", canonical)).toBe(false);
      for (let i = 0; i < 50 && heard === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toBe(1);
    } finally {
      consent.close?.();
      await consent.closed();
      await t.done();
    }
  });

  it("a denial carries the person's note; closing cancels what waits and ends the grants held", async () => {
    const t = await setup();
    const consent = consoleConsent(t.queue, { process: "afs broker" });
    try {
      const denied = consent.decide(request(["p"]), canonical);
      await t.person.decide((await pendingOf(t.person)).id, { allow: false, note: "not now", by: "bob" });
      expect(await denied).toEqual({ approved: [], reason: "the request was denied in the afs console: not now" });

      const allowed = consent.decide(request(["p/a"]), canonical);
      await t.person.decide((await pendingOf(t.person)).id, { allow: "all", by: "bob" });
      await allowed;
      expect((await t.person.list()).grants).toHaveLength(1);

      const abandoned = consent.decide(request(["p/b"]), canonical).catch((e: unknown) => e);
      const left = await pendingOf(t.person);
      consent.close?.();
      await consent.closed();
      expect(await abandoned).toMatchObject({ code: "TIMEOUT" });
      expect((await t.person.get(left.id)).state).toBe("cancelled");
      const list = await t.person.list();
      expect(list.pending).toEqual([]);
      expect(list.grants).toEqual([]);
    } finally {
      await t.done();
    }
  });
});

describe("console approvals (afs acp)", () => {
  it("asks with the diff; an allow for the session answers later writes until it is revoked", async () => {
    const t = await setup();
    const inConsole = consoleApprovals(t.queue, { process: "afs acp", agent: () => "agent 1.0", roots: ["/p"] });
    const approvals = new Approvals("console", { ask: inConsole.ask });
    const write = { kind: "write" as const, session: "s1", title: "write /p/a.txt", paths: ["/p/a.txt"], diff: "+a\n" };
    try {
      const first = approvals.decide(write);
      const asked = await pendingOf(t.person);
      expect(asked).toMatchObject({ kind: "write", agent: "agent 1.0", session: "s1", diff: "+a\n", roots: ["/p"] });
      await t.person.decide(asked.id, { allow: "all", grant: true, by: "carol" });
      expect(await first).toMatchObject({ allowed: true, by: "person" });
      expect(await approvals.decide(write)).toMatchObject({ allowed: true, by: "grant" });
      // Another session's write is not covered.
      const other = approvals.decide({ ...write, session: "s2" });
      const asked2 = await pendingOf(t.person);
      await t.person.decide(asked2.id, { allow: false, note: "no", by: "carol" });
      expect(await other).toMatchObject({ allowed: false, note: "no" });
      await t.person.revokeGrant(asked.id);
      const again = approvals.decide(write);
      const asked3 = await pendingOf(t.person);
      expect(asked3.id).not.toBe(asked.id);
      await t.person.decide(asked3.id, { allow: false, by: "carol" });
      expect(await again).toMatchObject({ allowed: false, by: "person" });
    } finally {
      await inConsole.close();
      await t.done();
    }
  });

  it("a permission allowed for some of its paths lets only their writes through unasked", async () => {
    const t = await setup();
    const inConsole = consoleApprovals(t.queue, { process: "afs acp", agent: () => "agent" });
    const approvals = new Approvals("console", { ask: inConsole.ask });
    try {
      const permission = approvals.decide({
        kind: "permission",
        session: "s1",
        title: "edit two files",
        paths: ["/p/a.txt", "/p/b.txt"],
      });
      const asked = await pendingOf(t.person);
      expect(asked).toMatchObject({ kind: "permission", paths: ["/p/a.txt", "/p/b.txt"] });
      await t.person.decide(asked.id, { allow: ["/p/a.txt"], by: "dan" });
      expect(await permission).toMatchObject({ allowed: true, by: "person" });
      const write = (path: string) => ({
        kind: "write" as const,
        session: "s1",
        title: `write ${path}`,
        paths: [path],
      });
      expect(await approvals.decide(write("/p/a.txt"))).toMatchObject({ allowed: true, by: "grant" });
      const b = approvals.decide(write("/p/b.txt"));
      await t.person.decide((await pendingOf(t.person)).id, { allow: false, by: "dan" });
      expect(await b).toMatchObject({ allowed: false, by: "person" });
    } finally {
      await inConsole.close();
      await t.done();
    }
  });
});
