// `afs.tokens`: the bearer tokens the store keeps (only their secrets' hashes), so every `afs
// serve` sharing a store agrees on them. Rules (profiles, expiry, checking) live in access/tokens.ts.
import type { TokenRecord } from "../../core/token-record.js";
import type { Engine } from "./engine.js";

export type { TokenRecord };

/** What access/tokens.ts needs from the engine to issue, check, list and revoke tokens. */
export interface TokenRegistry {
  /** Stores the record as given; ALREADY_EXISTS when the id is taken. */
  put(token: TokenRecord): Promise<void>;
  get(id: string): Promise<TokenRecord | null>;
  /** Newest first. */
  list(): Promise<TokenRecord[]>;
  /** Marks a token revoked (keeping the first revocation time); false when there is no such token. */
  revoke(id: string, at: number): Promise<boolean>;
  /** Whether a workspace a token would be pinned to exists. */
  hasWorkspace(name: string): Promise<boolean>;
}

export class Tokens implements TokenRegistry {
  constructor(private readonly engine: Engine) {}

  put(token: TokenRecord): Promise<void> {
    return this.engine.store.putToken(token);
  }

  get(id: string): Promise<TokenRecord | null> {
    return this.engine.store.getToken(id);
  }

  list(): Promise<TokenRecord[]> {
    return this.engine.store.listTokens();
  }

  revoke(id: string, at: number): Promise<boolean> {
    return this.engine.store.revokeToken(id, at);
  }

  async hasWorkspace(name: string): Promise<boolean> {
    return (await this.engine.store.getWorkspace(name)) !== null;
  }
}
