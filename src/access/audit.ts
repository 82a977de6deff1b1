// The broker's audit log: one JSON line per request (allowed, refused or failed) with who, what,
// where (root-relative) and how much, never file content. Lines go to a file, a callback, or both.
import { appendFileSync } from "node:fs";

export type AuditOutcome = "ok" | "denied" | "violation" | "error";

export interface AuditEntry {
  /** ISO time the request finished. */
  time: string;
  server: string;
  method: string;
  /** Root-relative ("project/src/a.ts"); a refused path is quoted as given, shortened. */
  path?: string;
  newPath?: string;
  bytes?: number;
  outcome: AuditOutcome;
  /** The afs error code of a refusal or failure. */
  code?: string;
  consentId?: string;
  durationMs?: number;
}

export interface AuditOptions {
  /** Appends each line to this file (created when missing). */
  file?: string;
  /** Receives each entry (and its line) as it is written. */
  onEntry?: (entry: AuditEntry, line: string) => void;
}

const MAX_PATH_CHARS = 256;

export class AuditLog {
  constructor(private readonly options: AuditOptions = {}) {}

  record(entry: Omit<AuditEntry, "time"> & { time?: string }): AuditEntry {
    const full: AuditEntry = { ...entry, time: entry.time ?? new Date().toISOString() };
    if (full.path !== undefined) full.path = shorten(full.path);
    if (full.newPath !== undefined) full.newPath = shorten(full.newPath);
    const line = JSON.stringify(full);
    // Synchronous on purpose: an audit line must be on disk before the answer goes out.
    if (this.options.file) appendFileSync(this.options.file, `${line}\n`, { mode: 0o600 });
    this.options.onEntry?.(full, line);
    return full;
  }
}

const shorten = (s: string): string => (s.length > MAX_PATH_CHARS ? `${s.slice(0, MAX_PATH_CHARS)}…` : s);
