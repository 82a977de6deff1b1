// The token part of the Store contract: every Store keeps tokens the same way (hash only, newest
// first, revocation that sticks), whatever its backend.
import { afterEach, beforeEach, describe, expect } from "vitest";
import type { TokenRecord } from "../../src/store/tokens.js";
import { type Skip, skippable } from "./skip.js";
import type { StoreFactory } from "./store-contract.js";

export function tokenStoreContract(name: string, factory: StoreFactory, options: { skip?: Skip[] } = {}): void {
  /** The suite's `it`, skipping what options.skip lists with its reason. */
  const it = skippable(options.skip);
  describe(`TokenStore contract: ${name}`, () => {
    let t: Awaited<ReturnType<StoreFactory>>;
    beforeEach(async () => {
      t = await factory();
    });
    afterEach(() => t.cleanup());

    const token = (id: string, over: Partial<TokenRecord> = {}): TokenRecord => ({
      id,
      name: `token ${id}`,
      secretHash: "a".repeat(64),
      workspace: "demo",
      profile: "workspace-rw",
      createdAt: 1000,
      expiresAt: null,
      revokedAt: null,
      actor: "tester",
      ...over,
    });

    it("stores and returns tokens as given", async () => {
      const a = token("a", { expiresAt: 5000 });
      const b = token("b", { workspace: null, profile: "admin-ro", createdAt: 2000 });
      await t.store.putToken(a);
      await t.store.putToken(b);
      expect(await t.store.getToken("a")).toEqual(a);
      expect(await t.store.getToken("b")).toEqual(b);
      expect(await t.store.getToken("c")).toBeNull();
      expect((await t.store.listTokens()).map((x) => x.id)).toEqual(["b", "a"]);
    });

    it("stores a token that is already revoked as revoked (afs migrate copies them so)", async () => {
      const a = token("a", { revokedAt: 2500 });
      await t.store.putToken(a);
      expect(await t.store.getToken("a")).toEqual(a);
      expect(await t.store.revokeToken("a", 4000)).toBe(true);
      expect((await t.store.getToken("a"))?.revokedAt).toBe(2500);
    });

    it("refuses a taken id", async () => {
      await t.store.putToken(token("a"));
      await expect(t.store.putToken(token("a", { name: "other" }))).rejects.toMatchObject({ code: "ALREADY_EXISTS" });
      expect((await t.store.getToken("a"))?.name).toBe("token a");
    });

    it("revokes once and keeps the first revocation time", async () => {
      await t.store.putToken(token("a"));
      expect(await t.store.revokeToken("a", 3000)).toBe(true);
      expect(await t.store.revokeToken("a", 4000)).toBe(true);
      expect((await t.store.getToken("a"))?.revokedAt).toBe(3000);
      expect(await t.store.revokeToken("missing", 3000)).toBe(false);
    });
  });
}
