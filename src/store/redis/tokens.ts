// Tokens in Redis: one hash of records (id → "<insertion number>:<JSON>") and one of first
// revocation times, under one hash tag, so creating and revoking are single-slot scripts.
import { AfsError } from "../../core/errors.js";
import type { TokenRecord, TokenStore } from "../tokens.js";
import { arr, fields, type RedisLink, str } from "./client.js";
import type { Keys } from "./keys.js";
import { PUT_TOKEN, REVOKE_TOKEN } from "./scripts.js";

export class RedisTokens implements TokenStore {
  constructor(
    private readonly link: RedisLink,
    private readonly keys: Keys,
  ) {}

  async putToken(t: TokenRecord): Promise<void> {
    const record = {
      id: t.id,
      name: t.name,
      secretHash: t.secretHash,
      workspace: t.workspace,
      profile: t.profile,
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      actor: t.actor,
    };
    const reply = arr(
      await this.link.run(
        PUT_TOKEN,
        [this.keys.tokens, this.keys.tokenSeq, this.keys.tokenRevocations],
        // A revoked token (afs migrate copies them) is stored revoked in the same step.
        [t.id, JSON.stringify(record), t.revokedAt === null ? "" : String(t.revokedAt)],
      ),
    );
    if (str(reply[0] ?? null) === "EXISTS") {
      throw new AfsError("ALREADY_EXISTS", `token ${t.id} already exists`, { token_id: t.id });
    }
  }

  async getToken(id: string): Promise<TokenRecord | null> {
    const [stored, revoked] = await Promise.all([
      this.link.read(["HGET", this.keys.tokens, id]),
      this.link.read(["HGET", this.keys.tokenRevocations, id]),
    ]);
    const value = str(stored);
    return value === null ? null : parse(value, str(revoked)).record;
  }

  async listTokens(): Promise<TokenRecord[]> {
    const [all, revoked] = await Promise.all([
      this.link.read(["HGETALL", this.keys.tokens]),
      this.link.read(["HGETALL", this.keys.tokenRevocations]),
    ]);
    const revocations = fields(revoked);
    const parsed = [...fields(all)].map(([id, value]) => parse(value, revocations.get(id) ?? null));
    // Like SQLite's ORDER BY created_at DESC, rowid DESC.
    parsed.sort((a, b) => b.record.createdAt - a.record.createdAt || b.n - a.n);
    return parsed.map((p) => p.record);
  }

  async revokeToken(id: string, at: number): Promise<boolean> {
    return (await this.link.run(REVOKE_TOKEN, [this.keys.tokens, this.keys.tokenRevocations], [id, String(at)])) === 1;
  }
}

function parse(value: string, revoked: string | null): { n: number; record: TokenRecord } {
  const colon = value.indexOf(":");
  const r = JSON.parse(value.slice(colon + 1)) as Omit<TokenRecord, "revokedAt">;
  return {
    n: Number(value.slice(0, colon)),
    record: {
      id: r.id,
      name: r.name,
      secretHash: r.secretHash,
      workspace: r.workspace,
      profile: r.profile,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      revokedAt: revoked === null ? null : Number(revoked),
      actor: r.actor,
    },
  };
}
