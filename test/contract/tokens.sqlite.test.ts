// The TokenStore contract on SQLite, and the migration that adds the token table to a version-1 store.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/store/sqlite/schema.js";
import { openSqlite, sqliteFactory, storeEnabled } from "./stores.js";
import { tokenStoreContract } from "./token-store-contract.js";

describe.runIf(storeEnabled("sqlite"))("sqlite", () => {
  tokenStoreContract("sqlite", sqliteFactory);
});

it("migrates a version-1 store: workspaces stay, tokens become available", async () => {
  const dir = await mkdtemp(join(tmpdir(), "afs-tokens-"));
  try {
    const path = join(dir, "afs.db");
    await openSqlite(path).close();
    const raw = new Database(path);
    raw.exec(
      "DROP TABLE tokens; DROP TABLE blob_chunks; DROP TABLE chunks; DROP TABLE templates; DROP TABLE approvals",
    );
    // And what the history migrations added (the surface of events, their path index, settings).
    raw.exec("DROP TABLE workspace_settings; DROP INDEX events_by_path; ALTER TABLE events DROP COLUMN surface");
    raw.pragma("user_version = 1");
    raw.close();

    const store = openSqlite(path);
    await store.putToken({
      id: "x",
      name: "x",
      secretHash: "b".repeat(64),
      workspace: null,
      profile: "admin-ro",
      createdAt: 1,
      expiresAt: null,
      revokedAt: null,
      actor: "t",
    });
    expect((await store.listTokens()).map((t) => t.id)).toEqual(["x"]);
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    check.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
