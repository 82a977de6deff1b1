// What the host hands each brokered operation: who asks, the roots, the cancellation signal, and
// `authorize`, the one gate a path passes (resolve, confine, consent) before any volume sees it.
import type { ConsentMode, Grants } from "../../access/consent.js";
import type { Target } from "./paths.js";
import type { BrokerRoot } from "./roots.js";
import type { Staging } from "./staging.js";

export interface Authorized {
  /** The path as the server named it. */
  target: Target;
  /** Where it really lands (symlinks followed), confined and consented. */
  real: Target;
  consentId: string;
}

/** What the audit line of this call records (filled in as the operation goes). */
export interface Note {
  path?: string;
  newPath?: string;
  bytes?: number;
  consentId?: string;
}

export interface BrokerContext {
  server: string;
  signal: AbortSignal;
  roots: readonly BrokerRoot[];
  chunkBytes: number;
  maxListEntries: number;
  staging: Staging;
  note: Note;
  /** Resolves, confines and checks consent for `given`; `entry`: the entry itself (delete, rename). */
  authorize(given: string, mode: ConsentMode, entry?: boolean): Promise<Authorized>;
  /** A volume path in the form the server uses. */
  display(t: Target): string;
}

/** What files/consent (consent.ts) needs from the host: the roots, the grants and how paths read. */
export interface Gate {
  roots: readonly BrokerRoot[];
  grants: Grants;
  canonical: (path: string) => string | null;
  display: (t: Target) => string;
}
