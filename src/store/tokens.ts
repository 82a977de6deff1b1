// Access tokens as the Store keeps them: only a hash of each secret, the scope it grants, and
// when it expires or was revoked. Every Store implements this so all `afs serve` processes agree.

import type { TokenRecord } from "../core/token-record.js";

export type { TokenRecord };

export interface TokenStore {
  /** Stores the record as given (a revoked one stays revoked); ALREADY_EXISTS when the id is taken. */
  putToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | null>;
  /** Newest first. */
  listTokens(): Promise<TokenRecord[]>;
  /** Marks a token revoked (keeping the first revocation time); false when there is no such token. */
  revokeToken(id: string, at: number): Promise<boolean>;
}
