import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempAfs } from "../../test/helpers/tmp.js";
import type { Afs } from "../workspace/afs.js";
import { checkBearer, issueToken, revokeToken, tokenInfo } from "./tokens.js";

let t: { afs: Afs; cleanup: () => Promise<void> };
beforeEach(async () => {
  t = await tempAfs();
  await t.afs.workspaces.create("demo");
});
afterEach(() => t.cleanup());

const NOW = Date.parse("2030-01-01T00:00:00Z");

describe("tokens", () => {
  it("issues a workspace token whose secret checks out, and stores only its hash", async () => {
    const { token, secret } = await issueToken(t.afs.tokens, { workspace: "demo", actor: "me" }, NOW);
    expect(secret).toMatch(/^afs_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(token).toMatchObject({ workspace: "demo", profile: "workspace-rw", name: "demo", expiresAt: null });
    expect(JSON.stringify(await t.afs.tokens.get(token.id))).not.toContain(secret.slice(22));
    const ok = await checkBearer(t.afs.tokens, `Bearer ${secret}`, NOW);
    expect(ok).toMatchObject({ ok: true, token: { id: token.id, profile: "workspace-rw" } });
    expect(await checkBearer(t.afs.tokens, `bearer   ${secret}`, NOW)).toMatchObject({ ok: true });
  });

  it("tells missing, malformed, unknown, revoked and expired apart", async () => {
    const { token, secret } = await issueToken(
      t.afs.tokens,
      { workspace: "demo", expiresAt: "2030-01-02T00:00:00Z", actor: "me" },
      NOW,
    );
    const refusal = async (header: string | undefined, now = NOW) => {
      const r = await checkBearer(t.afs.tokens, header, now);
      return r.ok ? "ok" : r.refusal;
    };
    expect(await refusal(undefined)).toBe("missing");
    expect(await refusal("Basic abc")).toBe("malformed");
    expect(await refusal(`Bearer ${secret}x`)).toBe("malformed");
    const wrongSecret = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    expect(await refusal(`Bearer ${wrongSecret}`)).toBe("unknown");
    expect(await refusal(`Bearer ${secret}`, Date.parse("2030-01-02T00:00:00Z"))).toBe("expired");
    expect(tokenInfo(token, Date.parse("2030-01-03T00:00:00Z")).status).toBe("expired");
    await revokeToken(t.afs.tokens, token.id, NOW);
    expect(await refusal(`Bearer ${secret}`)).toBe("revoked");
    await expect(revokeToken(t.afs.tokens, "ffffffffffffffff")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("matches profiles to scopes and refuses bad requests", async () => {
    const cp = await issueToken(t.afs.tokens, { actor: "me" }, NOW);
    expect(cp.token).toMatchObject({ workspace: null, profile: "admin-ro" });
    const bad = [
      { workspace: "demo", profile: "admin-rw" },
      { profile: "workspace-ro" },
      { workspace: "demo", profile: "root" },
      { workspace: "demo", expiresAt: "tomorrow" },
      { workspace: "demo", expiresAt: "2029-12-31T00:00:00Z" },
    ];
    for (const request of bad) {
      await expect(issueToken(t.afs.tokens, { ...request, actor: "me" }, NOW)).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    }
    await expect(issueToken(t.afs.tokens, { workspace: "ghost", actor: "me" }, NOW)).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
