// Consent for brokered file access: a ConsentProvider decides what a server may touch (a fixed
// policy, a JSON policy file re-read when it changes, or a person asked through a callback), and
// Grants keeps what was granted, with ids, until it is revoked. Paths here are consent keys:
// "ROOT" or "ROOT/sub/path", the root's name first; the broker turns every spelling into one.

import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { AfsError } from "../core/errors.js";

export type ConsentMode = "read" | "write";

export interface ApprovedPath {
  path: string;
  mode: ConsentMode;
}

export interface ConsentRequest {
  server: string;
  /** The server's own words for why it wants access. */
  message: string;
  /** Consent keys ("project/src"), each inside a root. */
  paths: readonly string[];
  /** The same places as host paths, where a root is a directory (for a person to recognise). */
  hostPaths: readonly (string | null)[];
}

export interface ConsentDecision {
  approved: ApprovedPath[];
  /** Why nothing (or less) was granted, and how to allow it. */
  reason?: string;
  /** The id the grant is to carry, when the provider keeps grants of its own (the console's). */
  grantId?: string;
}

/** Turns a path as a person or policy wrote it (absolute host path or root-relative) into a key; null when outside every root. */
export type Canonical = (path: string) => string | null;

export interface ConsentProvider {
  readonly kind: "allow" | "deny" | "policy" | "ask" | "console";
  /** `signal` aborts when the request is cancelled or times out: a provider waiting on a person stops waiting. */
  decide(request: ConsentRequest, canonical: Canonical, signal?: AbortSignal): Promise<ConsentDecision>;
  /** Whether a granted key is still allowed (a policy file narrowed meanwhile); absent: until revoked. */
  permits?(key: string, mode: ConsentMode, canonical: Canonical): Promise<boolean>;
  /** Listens for the policy changing, so running work can be checked again; returns an unsubscribe. */
  onChange?(listener: () => void): () => void;
  close?(): void;
}

/** True when `key` is `grant` itself or lies below it. */
export const covers = (grant: string, key: string): boolean => key === grant || key.startsWith(`${grant}/`);
const modeCovers = (granted: ConsentMode, wanted: ConsentMode): boolean => granted === "write" || wanted === "read";

const HOW_TO_ALLOW =
  "to allow it, run the broker with consent policy allow, a policy file that lists these paths, or ask mode";

export function allowConsent(mode: ConsentMode = "write"): ConsentProvider {
  return {
    kind: "allow",
    decide: async (request) => ({ approved: request.paths.map((path) => ({ path, mode })) }),
  };
}

export function denyConsent(
  reason = `file access was not granted (consent policy: deny); ${HOW_TO_ALLOW}`,
): ConsentProvider {
  return { kind: "deny", decide: async () => ({ approved: [], reason }) };
}

/** What the person answered: the paths they approved (narrower is fine), each a string (write) or with a mode. */
export type AskConsent = (request: ConsentRequest) => Promise<readonly (string | ApprovedPath)[]>;

/** Asks a person through `ask` (the host's elicitation, a terminal prompt); an error counts as a refusal. */
export function askConsent(ask: AskConsent): ConsentProvider {
  return {
    kind: "ask",
    decide: async (request, canonical) => {
      let answer: readonly (string | ApprovedPath)[];
      try {
        answer = await ask(request);
      } catch {
        answer = [];
      }
      const approved = answer.flatMap((a) => {
        const given = typeof a === "string" ? { path: a, mode: "write" as const } : a;
        const key = canonical(given.path);
        return key === null ? [] : [{ path: key, mode: given.mode }];
      });
      return approved.length > 0 ? { approved } : { approved: [], reason: `the request was declined; ${HOW_TO_ALLOW}` };
    },
  };
}

export const policyFileSchema = z.object({
  paths: z.array(z.object({ path: z.string(), mode: z.enum(["read", "write"]).default("read") })),
});

/**
 * A JSON policy file `{"paths": [{"path": "/home/me/project/src", "mode": "write"}, …]}` (host paths
 * or root-relative). Re-read whenever its mtime changes: a narrowed file takes effect on the next
 * call, and listeners hear of it within `pollMs` so running work can be stopped.
 */
export function policyFileConsent(file: string, options: { pollMs?: number } = {}): ConsentProvider {
  let cached: { mtimeMs: number; entries: ApprovedPath[] } | null = null;
  const listeners = new Set<() => void>();
  const load = async (): Promise<ApprovedPath[]> => {
    const mtimeMs = mtime();
    if (mtimeMs === -1) return []; // a deleted policy file allows nothing
    if (cached?.mtimeMs === mtimeMs) return cached.entries;
    let entries: ApprovedPath[] = [];
    try {
      entries = policyFileSchema.parse(JSON.parse(await readFile(file, "utf8"))).paths;
    } catch {
      entries = []; // a malformed policy allows nothing rather than everything
    }
    cached = { mtimeMs, entries };
    return entries;
  };
  const mtime = (): number => {
    try {
      return statSync(file).mtimeMs;
    } catch {
      return -1;
    }
  };
  let lastSeen = mtime();
  const timer = setInterval(() => {
    const m = mtime();
    if (m !== lastSeen) for (const l of listeners) l();
    lastSeen = m;
  }, options.pollMs ?? 200);
  timer.unref();
  const keyed = async (canonical: Canonical) =>
    (await load()).flatMap((e) => {
      const key = canonical(e.path);
      return key === null ? [] : [{ path: key, mode: e.mode }];
    });
  return {
    kind: "policy",
    decide: async (request, canonical) => {
      const policy = await keyed(canonical);
      const approved: ApprovedPath[] = [];
      for (const r of request.paths) {
        for (const p of policy) {
          if (covers(p.path, r)) approved.push({ path: r, mode: p.mode });
          else if (covers(r, p.path)) approved.push(p);
        }
      }
      return approved.length > 0
        ? { approved }
        : { approved: [], reason: `the consent policy file grants none of these paths; ${HOW_TO_ALLOW}` };
    },
    permits: async (key, mode, canonical) =>
      (await keyed(canonical)).some((p) => covers(p.path, key) && modeCovers(p.mode, mode)),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => clearInterval(timer),
  };
}

export interface Grant {
  id: string;
  server: string;
  paths: ApprovedPath[];
  time: number;
}

/** What each server was granted, by id; checked on every call, ended by revoke. */
export class Grants {
  private readonly byServer = new Map<string, Grant[]>();

  constructor(readonly provider: ConsentProvider) {}

  add(server: string, paths: ApprovedPath[], id: string = randomUUID()): Grant {
    const grant: Grant = { id, server, paths, time: Date.now() };
    const list = this.byServer.get(server) ?? [];
    list.push(grant);
    this.byServer.set(server, list);
    return grant;
  }

  /** The grant covering `key` for `mode`, after asking the provider whether it still stands; PERMISSION_DENIED otherwise. */
  async check(server: string, key: string, mode: ConsentMode, canonical: Canonical): Promise<Grant> {
    const list = this.byServer.get(server) ?? [];
    const grant = list.find((g) => g.paths.some((p) => covers(p.path, key) && modeCovers(p.mode, mode)));
    if (!grant) {
      const readOnly = list.some((g) => g.paths.some((p) => covers(p.path, key)));
      throw new AfsError(
        "PERMISSION_DENIED",
        readOnly
          ? `${key} was granted for reading only; ask for write access with a new consent request`
          : list.length === 0
            ? "no file access granted yet; request consent for the paths you need first"
            : `${key} is outside the paths granted; request consent for it first`,
        { path: key },
      );
    }
    if (this.provider.permits && !(await this.provider.permits(key, mode, canonical))) {
      throw new AfsError("PERMISSION_DENIED", `access to ${key} was revoked by the consent policy`, { path: key });
    }
    return grant;
  }

  /** Ends every grant of `server` (or of every server). */
  revoke(server?: string): void {
    if (server === undefined) this.byServer.clear();
    else this.byServer.delete(server);
  }

  list(server: string): readonly Grant[] {
    return this.byServer.get(server) ?? [];
  }
}
