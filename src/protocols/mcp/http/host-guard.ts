// DNS-rebinding protection: which Host and Origin headers the server answers. Loopback binds
// accept only loopback names; a wildcard bind checks Host only when allowed hosts are given.
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

export interface HostPolicy {
  /** Hostnames (no port) a request's Host may name; null accepts any. */
  hostnames: ReadonlySet<string> | null;
  /** Origins (scheme://host[:port]) allowed besides those on an allowed hostname. */
  origins: ReadonlySet<string>;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || (isIP(host) === 4 && host.startsWith("127."));

const isWildcard = (host: string): boolean => host === "0.0.0.0" || host === "::" || host === "[::]";

const bracketed = (host: string): string => (isIP(host) === 6 ? `[${host}]` : host);

export function hostPolicy(
  bind: string,
  allowedHosts: readonly string[],
  allowedOrigins: readonly string[],
): HostPolicy {
  const origins = new Set(allowedOrigins.map((o) => o.replace(/\/+$/, "").toLowerCase()));
  const extra = allowedHosts.map((h) => bracketed(h.toLowerCase()));
  if (isWildcard(bind) && extra.length === 0) return { hostnames: null, origins };
  const own = isLoopback(bind) ? LOOPBACK_NAMES : isWildcard(bind) ? [] : [bracketed(bind.toLowerCase())];
  return { hostnames: new Set([...own, ...extra]), origins };
}

const hostnameOf = (hostHeader: string): string | null => {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return null;
  }
};

/** Null when the request may proceed, else why it may not. */
export function refuseHost(policy: HostPolicy, req: IncomingMessage): string | null {
  const host = req.headers.host;
  if (policy.hostnames !== null) {
    if (!host) return "missing Host header";
    const name = hostnameOf(host);
    if (name === null || !policy.hostnames.has(name)) return `Host ${host} is not served here`;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return null;
  if (policy.origins.has(origin.toLowerCase())) return null;
  let name: string | null = null;
  try {
    name = new URL(origin).hostname.toLowerCase();
  } catch {
    return `Origin ${origin} is malformed`;
  }
  const sameSite = policy.hostnames === null ? hostnameOf(host ?? "") === name : policy.hostnames.has(name);
  return sameSite ? null : `Origin ${origin} is not allowed; start afs serve with --allowed-origin ${origin}`;
}
