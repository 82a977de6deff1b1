// Who is calling: with --auth none the configured local session, otherwise the bearer token's
// scope, or a 401 challenge that points at the protected-resource metadata (RFC 9728).
import type { IncomingMessage } from "node:http";
import type { WorkspaceBinding } from "../../../access/binding.js";
import type { Profile } from "../../../access/profiles.js";
import { checkBearer, type TokenRefusal } from "../../../access/tokens.js";
import type { TokenRegistry } from "../../../workspace/afs.js";

export type AuthMode = "token" | "none";

/** What one request may do: the MCP session it gets. */
export interface Session extends WorkspaceBinding {
  profile: Profile;
  actor?: string;
}

export interface AuthConfig {
  mode: AuthMode;
  tokens: TokenRegistry;
  /** The session every request gets with --auth none. */
  local: Session;
}

export type AuthResult = { ok: true; session: Session } | { ok: false; refusal: TokenRefusal };

const REFUSALS: Readonly<Record<TokenRefusal, string>> = {
  missing: "authorization required: send Authorization: Bearer <token> (issue one with afs token issue)",
  malformed: "the Authorization header is not Bearer <afs token>",
  unknown: "the token is not valid",
  revoked: "the token was revoked",
  expired: "the token has expired",
};

export const authenticate = (config: AuthConfig, req: IncomingMessage): Promise<AuthResult> =>
  authenticateBearer(config, req.headers.authorization);

/** The session of an Authorization value (`Bearer <token>`), wherever it came from (the console's cookie). */
export async function authenticateBearer(config: AuthConfig, authorization: string | undefined): Promise<AuthResult> {
  if (config.mode === "none") return { ok: true, session: config.local };
  const check = await checkBearer(config.tokens, authorization);
  if (!check.ok) return check;
  const { token } = check;
  return {
    ok: true,
    session: {
      profile: token.profile,
      workspace: token.workspace,
      pinned: token.workspace !== null,
      actor: `token:${token.name}`,
    },
  };
}

export const refusalMessage = (refusal: TokenRefusal): string => REFUSALS[refusal];

/** The WWW-Authenticate value of a 401: invalid_token once a token was presented at all. */
export function challenge(metadataUrl: string, refusal: TokenRefusal): string {
  const base = `Bearer realm="afs", resource_metadata="${metadataUrl}"`;
  return refusal === "missing" ? base : `${base}, error="invalid_token", error_description="${REFUSALS[refusal]}"`;
}
