// Access tokens as the Store keeps them: only a hash of each secret, the scope it grants, and
// when it expires or was revoked. Every Store implements this so all `afs serve` processes agree.

export interface TokenRecord {
  /** Public id, part of the token string and shown by `afs token list`. */
  id: string;
  name: string;
  /** SHA-256 (hex) of the whole token string; the secret itself is never stored. */
  secretHash: string;
  /** The workspace a workspace-scoped token is pinned to; null for a control-plane token. */
  workspace: string | null;
  profile: string;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
  /** Who issued it. */
  actor: string;
}

export interface TokenStore {
  /** Stores the record as given (a revoked one stays revoked); ALREADY_EXISTS when the id is taken. */
  putToken(token: TokenRecord): Promise<void>;
  getToken(id: string): Promise<TokenRecord | null>;
  /** Newest first. */
  listTokens(): Promise<TokenRecord[]>;
  /** Marks a token revoked (keeping the first revocation time); false when there is no such token. */
  revokeToken(id: string, at: number): Promise<boolean>;
}
