// Bearer tokens: issue (the secret is returned once, only its hash is stored), check on every
// request (constant-time, expiry and revocation included), list and revoke.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { TokenRecord } from "../core/token-record.js";
import type { TokenRegistry } from "../workspace/afs.js";
import { isProfile, PROFILE_TABLE, type Profile, parseProfile } from "./profiles.js";

/** afs_<16 hex id>_<43 base64url secret>: the id finds the record, the whole string is hashed. */
const TOKEN_FORMAT = /^afs_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;

export const DEFAULT_WORKSPACE_TOKEN_PROFILE: Profile = "workspace-rw";
export const DEFAULT_CONTROL_PLANE_PROFILE: Profile = "admin-ro";

export interface IssueRequest {
  /** The workspace a token is pinned to; omitted for a control-plane token. */
  workspace?: string;
  profile?: string;
  name?: string;
  /** ISO 8601 time after which the token stops working. */
  expiresAt?: string;
  actor: string;
}

export interface IssuedToken {
  token: TokenRecord;
  /** The bearer secret; shown once, never stored. */
  secret: string;
}

const hashOf = (secret: string): string => createHash("sha256").update(secret).digest("hex");

export async function issueToken(tokens: TokenRegistry, request: IssueRequest, now = Date.now()): Promise<IssuedToken> {
  const controlPlane = request.workspace === undefined;
  const profile = parseProfile(
    request.profile ?? (controlPlane ? DEFAULT_CONTROL_PLANE_PROFILE : DEFAULT_WORKSPACE_TOKEN_PROFILE),
  );
  if (PROFILE_TABLE[profile].workspaceBound === controlPlane) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      controlPlane
        ? `profile ${profile} is for a workspace token; pass a workspace, or use admin-ro or admin-rw for the control plane`
        : `profile ${profile} is for a control-plane token; a workspace token takes workspace-ro, workspace-rw or workspace-rw-checkpoint`,
    );
  }
  const expiresAt = request.expiresAt === undefined ? null : parseExpiry(request.expiresAt, now);
  if (request.workspace !== undefined && !(await tokens.hasWorkspace(request.workspace))) {
    throw new AfsError("NOT_FOUND", `workspace ${request.workspace} does not exist; create it first`, {
      workspace: request.workspace,
    });
  }
  const id = randomBytes(8).toString("hex");
  const secret = `afs_${id}_${randomBytes(32).toString("base64url")}`;
  const token: TokenRecord = {
    id,
    name: request.name ?? (controlPlane ? "control-plane" : `${request.workspace}`),
    secretHash: hashOf(secret),
    workspace: request.workspace ?? null,
    profile,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    actor: request.actor,
  };
  await tokens.put(token);
  return { token, secret };
}

function parseExpiry(text: string, now: number): number {
  const at = Date.parse(text);
  if (Number.isNaN(at)) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `expires_at ${JSON.stringify(text)} is not an ISO 8601 time (e.g. 2030-01-31T12:00:00Z)`,
    );
  }
  if (at <= now) throw new AfsError("INVALID_ARGUMENT", `expires_at ${text} is in the past; give a future time`);
  return at;
}

/** Why a presented token was refused, for the 401 the HTTP edge sends. */
export type TokenRefusal = "missing" | "malformed" | "unknown" | "revoked" | "expired";

export type TokenCheck = { ok: true; token: TokenRecord & { profile: Profile } } | { ok: false; refusal: TokenRefusal };

/** Checks an Authorization header value. Every failure looks the same in time to the caller. */
export async function checkBearer(
  tokens: Pick<TokenRegistry, "get">,
  header: string | undefined,
  now = Date.now(),
): Promise<TokenCheck> {
  if (header === undefined || header.trim() === "") return { ok: false, refusal: "missing" };
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  const secret = match?.[1];
  const id = secret === undefined ? undefined : TOKEN_FORMAT.exec(secret)?.[1];
  if (secret === undefined || id === undefined) return { ok: false, refusal: "malformed" };
  const token = await tokens.get(id);
  // Compare even when there is no record, so an unknown id costs what a wrong secret costs.
  const expected = Buffer.from(token?.secretHash ?? "0".repeat(64), "hex");
  const same = timingSafeEqual(expected, Buffer.from(hashOf(secret), "hex"));
  if (!token || !same || !isProfile(token.profile)) return { ok: false, refusal: "unknown" };
  if (token.revokedAt !== null) return { ok: false, refusal: "revoked" };
  if (token.expiresAt !== null && token.expiresAt <= now) return { ok: false, refusal: "expired" };
  return { ok: true, token: { ...token, profile: token.profile } };
}

export async function revokeToken(tokens: Pick<TokenRegistry, "revoke">, id: string, now = Date.now()): Promise<void> {
  if (!(await tokens.revoke(id, now))) {
    throw new AfsError("NOT_FOUND", `token ${id} does not exist`, { token_id: id }, "list-tokens");
  }
}

/** A token as listings show it: never the hash. */
export interface TokenInfo {
  token_id: string;
  name: string;
  scope: "workspace" | "control-plane";
  workspace: string | null;
  profile: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: "active" | "expired" | "revoked";
}

export function tokenInfo(t: TokenRecord, now = Date.now()): TokenInfo {
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  return {
    token_id: t.id,
    name: t.name,
    scope: t.workspace === null ? "control-plane" : "workspace",
    workspace: t.workspace,
    profile: t.profile,
    created_at: new Date(t.createdAt).toISOString(),
    expires_at: iso(t.expiresAt),
    revoked_at: iso(t.revokedAt),
    status: t.revokedAt !== null ? "revoked" : t.expiresAt !== null && t.expiresAt <= now ? "expired" : "active",
  };
}
