// The broker host against hostile paths (0 escapes, a canary never touched), consent granted,
// narrowed, denied and revoked (by API and by editing the policy file), rate limits and timeouts.
import { writeFile as fsWrite, readFile, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AuditEntry, AuditLog } from "../../src/access/audit.js";
import {
  allowConsent,
  askConsent,
  type ConsentProvider,
  denyConsent,
  policyFileConsent,
} from "../../src/access/consent.js";
import { BrokerHost } from "../../src/protocols/broker/host.js";
import { tempDir } from "../helpers/tmp.js";
import { call, layout, snapshot, until } from "./fixture.js";

let base: string;
let cleanup: () => Promise<void>;
let dirs: { root: string; canary: string; evil: string };
let host: BrokerHost | undefined;
let audit: AuditEntry[];

beforeEach(async () => {
  ({ dir: base, cleanup } = await tempDir("afs-broker-"));
  dirs = await layout(base);
  audit = [];
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await cleanup();
});

const open = async (consent: ConsentProvider, extra: Partial<Parameters<typeof BrokerHost.open>[0]> = {}) => {
  host = await BrokerHost.open({
    roots: [{ dir: dirs.root }],
    consent,
    audit: new AuditLog({ onEntry: (e) => audit.push(e) }),
    ...extra,
  });
  return host;
};
const grantAll = async (h: BrokerHost, server = "srv") => {
  const r = await call(h, "files/consent", { message: "work", requestedPaths: ["."] }, server);
  expect(r.ok && r.result.granted).toBe(true);
};

describe("hostile paths", () => {
  it("refuses every escape on every method, and the canary is never read or changed", async () => {
    const h = await open(allowConsent());
    await grantAll(h);
    const before = [await snapshot(dirs.canary), await snapshot(dirs.evil)];
    const canaryAtime = (await stat(join(dirs.canary, "canary.txt"))).atimeMs;
    const hostile = [
      "../canary/canary.txt",
      "sub/../../canary/canary.txt",
      "%2e%2e/canary/canary.txt",
      "sub/%2E%2E/%2e%2e/canary/canary.txt",
      "a.txt\0.png",
      "sub\\..\\..\\canary\\canary.txt",
      join(dirs.canary, "canary.txt"),
      join(dirs.evil, "secret.txt"),
      `${dirs.root}-evil/secret.txt`,
      `file://${dirs.canary}/canary.txt`,
      `file://${dirs.root}/%2e%2e/canary/canary.txt`,
      "/etc/passwd",
      "link-file",
      "link-dir/canary.txt",
      "link-dir/new.txt",
      "dangling",
      "chain1/canary.txt",
      "chain1/new.txt",
    ];
    const through = hostile.filter((p) => p !== "link-file" && p !== "dangling"); // entry ops act on a link itself
    const attempts: [string, unknown][] = [];
    for (const p of hostile) {
      attempts.push(["files/read", { path: p }], ["files/read", { path: p, encoding: "base64" }]);
      attempts.push(
        ["files/write", { path: p, content: "pwned" }],
        ["files/write", { path: p, content: "x", offset: 0 }],
      );
      attempts.push(["files/list", { path: p, recursive: true }], ["files/watch", { path: p, recursive: true }]);
      attempts.push(["files/create", { path: p, type: "file" }], ["files/create", { path: p, type: "directory" }]);
      attempts.push(["files/rename", { oldPath: "a.txt", newPath: p }]);
    }
    attempts.push(["files/list", { path: "link-dir" }], ["files/list", { path: "chain1" }]);
    for (const p of through) {
      attempts.push(["files/delete", { path: p }], ["files/delete", { path: p, recursive: true }]);
      attempts.push(["files/rename", { oldPath: p, newPath: "stolen.txt" }]);
    }
    const escapes: string[] = [];
    for (const [method, params] of attempts) {
      const r = await call(h, method, params);
      if (r.ok) escapes.push(`${method} ${JSON.stringify(params)}`);
      else {
        // Renaming onto a link's own name is refused because the name is taken (never replaced).
        expect(["INVALID_PATH", "PERMISSION_DENIED", "FILE_NOT_FOUND", "CONCURRENCY_CONFLICT"]).toContain(
          r.error.data.code,
        );
        expect(r.error.message).not.toContain(dirs.canary);
        expect(r.error.message).not.toContain(dirs.evil);
        expect(r.error.message).not.toContain("CANARY");
      }
    }
    expect(escapes).toEqual([]);
    expect([await snapshot(dirs.canary), await snapshot(dirs.evil)]).toEqual(before);
    expect((await stat(join(dirs.canary, "canary.txt"))).atimeMs).toBe(canaryAtime);
    // A recursive listing shows links as links and never walks into them.
    const listing = await call(h, "files/list", { path: ".", recursive: true, includeHidden: true });
    const paths = listing.ok ? (listing.result.entries as { path: string; type: string }[]) : [];
    expect(paths.map((e) => e.path).sort()).toEqual([
      "a.txt",
      "chain1",
      "chain2",
      "dangling",
      "link-dir",
      "link-file",
      "sub",
      "sub/b.txt",
    ]);
    expect(paths.find((e) => e.path === "link-dir")?.type).toBe("symlink");
    expect(audit.filter((e) => e.outcome === "violation").length).toBeGreaterThan(50);
    expect(JSON.stringify(audit)).not.toContain("CANARY");
  });

  it("accepts absolute host paths and file:// URIs inside a root, and never deletes a root", async () => {
    const h = await open(allowConsent());
    await grantAll(h);
    for (const p of [join(dirs.root, "a.txt"), `file://${dirs.root}/a.txt`, "./a.txt", "a.txt"]) {
      const r = await call(h, "files/read", { path: p });
      expect(r.ok && r.result.content).toBe("alpha\n");
    }
    for (const p of [".", dirs.root, `file://${dirs.root}`]) {
      const r = await call(h, "files/delete", { path: p, recursive: true });
      expect(!r.ok && r.error.data.code).toBe("PERMISSION_DENIED");
    }
  });
});

describe("consent", () => {
  it("serves nothing before consent, and nothing after a denial, saying how to allow", async () => {
    const h = await open(denyConsent());
    const before = await call(h, "files/read", { path: "a.txt" });
    expect(!before.ok && before.error.data.code).toBe("PERMISSION_DENIED");
    expect(!before.ok && before.error.code).toBe(-31002);
    const r = await call(h, "files/consent", { message: "pls", requestedPaths: ["."] });
    expect(r.ok && r.result).toMatchObject({ granted: false, approvedPaths: [] });
    expect(r.ok && String(r.result.message)).toMatch(/to allow it/);
    expect((await call(h, "files/read", { path: "a.txt" })).ok).toBe(false);
  });

  it("grants narrower than asked through a person, and nothing outside is served", async () => {
    const asked: string[][] = [];
    const h = await open(
      askConsent(async (req) => {
        asked.push([...req.paths]);
        return ["sub", join(dirs.canary, "canary.txt")]; // the second is outside every root: ignored
      }),
    );
    const r = await call(h, "files/consent", { message: "read sources", requestedPaths: [".", "../canary"] });
    expect(asked).toEqual([["root"]]);
    expect(r.ok && r.result).toMatchObject({ granted: true, approvedPaths: ["sub"] });
    expect((await call(h, "files/read", { path: "sub/b.txt" })).ok).toBe(true);
    const outside = await call(h, "files/read", { path: "a.txt" });
    expect(!outside.ok && outside.error.data.code).toBe("PERMISSION_DENIED");
    expect(audit.find((e) => e.method === "files/read" && e.outcome === "ok")?.consentId).toBe(
      r.ok && r.result.consentId,
    );
  });

  it("a policy file grants read or write per path, and editing it revokes on the next call", async () => {
    const policy = join(base, "policy.json");
    await fsWrite(
      policy,
      JSON.stringify({
        paths: [
          { path: join(dirs.root, "sub"), mode: "write" },
          { path: "root/a.txt", mode: "read" },
        ],
      }),
    );
    const h = await open(policyFileConsent(policy, { pollMs: 20 }));
    const r = await call(h, "files/consent", { message: "m", requestedPaths: ["."] });
    expect(r.ok && (r.result.approvedPaths as string[]).sort()).toEqual(["a.txt", "sub"]);
    expect((await call(h, "files/write", { path: "sub/new.txt", content: "n" })).ok).toBe(true);
    const ro = await call(h, "files/write", { path: "a.txt", content: "n" });
    expect(!ro.ok && ro.error.data.code).toBe("PERMISSION_DENIED");
    expect((await call(h, "files/read", { path: "a.txt" })).ok).toBe(true);
    await fsWrite(policy, JSON.stringify({ paths: [] }));
    await utimes(policy, new Date(), new Date(Date.now() + 5000));
    const after = await call(h, "files/read", { path: "a.txt" });
    expect(!after.ok && after.error.data.code).toBe("PERMISSION_DENIED");
  });

  it("a read-only root grants reading only", async () => {
    host = await BrokerHost.open({ roots: [{ dir: dirs.root, readOnly: true }], consent: allowConsent() });
    await grantAll(host);
    expect((await call(host, "files/read", { path: "a.txt" })).ok).toBe(true);
    const w = await call(host, "files/write", { path: "a.txt", content: "x" });
    expect(!w.ok && w.error.data.code).toBe("PERMISSION_DENIED");
    expect(await readFile(join(dirs.root, "a.txt"), "utf8")).toBe("alpha\n");
  });
});

describe("revocation", () => {
  it("cancels a running chunked write and ends watches", async () => {
    const h = await open(allowConsent());
    await grantAll(h);
    const seen: string[] = [];
    h.onNotification((_s, _m, p) => seen.push(String(p.path)));
    expect((await call(h, "files/watch", { path: ".", recursive: true })).ok).toBe(true);
    expect((await call(h, "files/write", { path: "big.bin", content: "AAAA", encoding: "base64", offset: 0 })).ok).toBe(
      true,
    );
    h.revoke("srv");
    const next = await call(h, "files/write", {
      path: "big.bin",
      content: "AAAA",
      encoding: "base64",
      offset: 3,
      final: true,
    });
    expect(!next.ok && next.error.data.code).toBe("PERMISSION_DENIED");
    await grantAll(h);
    const resumed = await call(h, "files/write", {
      path: "big.bin",
      content: "AAAA",
      encoding: "base64",
      offset: 3,
      final: true,
    });
    expect(resumed.ok).toBe(false); // the staged upload is gone
    await fsWrite(join(dirs.root, "after-revoke.txt"), "x");
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toEqual([]);
    await expect(stat(join(dirs.root, "big.bin"))).rejects.toThrow();
  });

  it("editing the policy file ends a watch over paths it no longer grants", async () => {
    const policy = join(base, "policy.json");
    await fsWrite(policy, JSON.stringify({ paths: [{ path: "root", mode: "read" }] }));
    const h = await open(policyFileConsent(policy, { pollMs: 20 }));
    await grantAll(h);
    const seen: string[] = [];
    h.onNotification((_s, _m, p) => seen.push(String(p.path)));
    await call(h, "files/watch", { path: ".", recursive: true });
    expect(h.watches.list()).toHaveLength(1);
    await fsWrite(policy, JSON.stringify({ paths: [] }));
    await utimes(policy, new Date(), new Date(Date.now() + 5000));
    await until(() => h.watches.list().length === 0);
  });
});

describe("limits", () => {
  it("rate limits per server with a retry-after hint", async () => {
    const h = await open(allowConsent(), { rate: { opsPerSecond: 3, bytesPerSecond: 1e9 } });
    await grantAll(h);
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await call(h, "files/read", { path: "a.txt" }));
    const refused = results.find((r) => !r.ok);
    expect(refused && !refused.ok && refused.error).toMatchObject({ code: -31007, data: { code: "QUOTA_EXCEEDED" } });
    expect(refused && !refused.ok && Number(refused.error.data.retryAfterMs)).toBeGreaterThan(0);
    expect((await call(h, "files/consent", { message: "m", requestedPaths: ["."] }, "other")).ok).toBe(true);
    expect(audit.some((e) => e.code === "QUOTA_EXCEEDED")).toBe(true);
  });

  it("times out a slow operation with TIMEOUT", async () => {
    const many = join(dirs.root, "many");
    await import("node:fs/promises").then(async (fsp) => {
      await fsp.mkdir(many);
      for (let i = 0; i < 3000; i++) await fsp.writeFile(join(many, `f${i}`), "");
    });
    const h = await open(allowConsent(), { timeoutMs: 2 });
    const r = await call(h, "files/consent", { message: "m", requestedPaths: ["."] });
    expect(r.ok).toBe(true);
    const slow = await call(h, "files/list", { path: "many", recursive: true });
    expect(!slow.ok && slow.error).toMatchObject({ code: -31005, data: { code: "TIMEOUT" } });
    await rm(many, { recursive: true });
  });
});
