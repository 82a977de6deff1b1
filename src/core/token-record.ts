// A bearer token as the engine keeps it: only a hash of its secret, the scope it grants, and when
// it expires or was revoked. Shared by the stores that hold it and the access rules that check it.

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
