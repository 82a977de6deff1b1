// The console's session: the token a person typed once, kept in a cookie the page's script cannot
// read (HttpOnly) and the browser sends to this site only (SameSite=Strict). Holding the token
// itself, not a copy of its rights, means a revoked or expired token stops the console at once.
import type { IncomingMessage } from "node:http";

export const COOKIE = "afs_console";

/** The token in the request's console cookie, if any. */
export function cookieToken(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** Set-Cookie for a session (`secure`: the console is reached over https). */
export function sessionCookie(token: string, secure: boolean): string {
  return `${COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export const clearedCookie = (): string => `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
