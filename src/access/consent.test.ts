import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { allowConsent, askConsent, covers, denyConsent, Grants, policyFileConsent } from "./consent.js";

// Keys are "ROOT/sub"; in these tests every path is already a key.
const canonical = (p: string): string | null => (p.startsWith("/") ? null : p);
const request = (paths: string[]) => ({ server: "s", message: "m", paths, hostPaths: paths.map(() => null) });

describe("consent", () => {
  it("covers a path and what lies below it, never a sibling with a longer name", () => {
    expect(covers("work", "work/a")).toBe(true);
    expect(covers("work", "work")).toBe(true);
    expect(covers("work", "work-evil/a")).toBe(false);
  });

  it("allow grants what was asked, deny grants nothing and says how to allow", async () => {
    expect((await allowConsent().decide(request(["w/a"]), canonical)).approved).toEqual([
      { path: "w/a", mode: "write" },
    ]);
    const d = await denyConsent().decide(request(["w/a"]), canonical);
    expect(d.approved).toEqual([]);
    expect(d.reason).toMatch(/to allow it/);
  });

  it("ask keeps what the person approved inside the roots; a failing callback refuses", async () => {
    const ok = askConsent(async () => ["w/a", { path: "w/b", mode: "read" }, "/outside"]);
    expect((await ok.decide(request(["w"]), canonical)).approved).toEqual([
      { path: "w/a", mode: "write" },
      { path: "w/b", mode: "read" },
    ]);
    const broken = askConsent(async () => {
      throw new Error("no terminal");
    });
    expect((await broken.decide(request(["w"]), canonical)).approved).toEqual([]);
  });

  it("a policy file narrows, grants per mode, and is re-read when it changes", async () => {
    const { dir, cleanup } = await tempDir();
    const file = join(dir, "policy.json");
    await writeFile(file, JSON.stringify({ paths: [{ path: "w/src", mode: "write" }, { path: "w/docs" }] }));
    const p = policyFileConsent(file, { pollMs: 10 });
    let changes = 0;
    p.onChange?.(() => changes++);
    expect((await p.decide(request(["w"]), canonical)).approved).toEqual([
      { path: "w/src", mode: "write" },
      { path: "w/docs", mode: "read" },
    ]);
    expect(await p.permits?.("w/docs/x", "write", canonical)).toBe(false);
    expect(await p.permits?.("w/src/x", "write", canonical)).toBe(true);
    await writeFile(file, "not json");
    const { utimes } = await import("node:fs/promises");
    await utimes(file, new Date(), new Date(Date.now() + 10_000));
    expect(await p.permits?.("w/src/x", "read", canonical)).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(changes).toBeGreaterThan(0);
    p.close?.();
    await cleanup();
  });

  it("grants have ids, are checked per mode and end on revoke", async () => {
    const g = new Grants(allowConsent());
    await expect(g.check("s", "w/a", "read", canonical)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    const grant = g.add("s", [{ path: "w", mode: "read" }]);
    expect((await g.check("s", "w/a", "read", canonical)).id).toBe(grant.id);
    await expect(g.check("s", "w/a", "write", canonical)).rejects.toThrow(/reading only/);
    await expect(g.check("other", "w/a", "read", canonical)).rejects.toThrow();
    g.revoke("s");
    await expect(g.check("s", "w/a", "read", canonical)).rejects.toThrow();
  });
});
