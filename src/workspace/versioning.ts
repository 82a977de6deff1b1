// A workspace's versioning policy (how long the old versions its events name stay readable) and
// what gc must therefore keep: every blob an event within the window names, old or new, and the
// newest versions of each path when a count is asked for. Stored with the workspace.
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { EventRecord, Store } from "../store/store.js";

export interface VersioningPolicy {
  /** False: events keep no content alive; only checkpoints and the live state do. */
  enabled: boolean;
  /** Versions named by events of the last this many days are kept (0: none by age). */
  keepDays: number;
  /** The newest this many versions of every path are kept whatever their age (0: none by count). */
  keepVersions: number;
}

export const DEFAULT_POLICY: VersioningPolicy = { enabled: true, keepDays: 7, keepVersions: 0 };
/** The workspace setting (Store.getWorkspaceSetting) the policy is kept under, as JSON. */
export const VERSIONING_SETTING = "versioning";
const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_DAYS = 36_500;
const MAX_VERSIONS = 1_000_000;

export async function readPolicy(store: Store, workspace: string): Promise<VersioningPolicy> {
  const raw = await store.getWorkspaceSetting(workspace, VERSIONING_SETTING);
  if (raw === null) return { ...DEFAULT_POLICY };
  try {
    const parsed = JSON.parse(raw) as Partial<VersioningPolicy>;
    return { ...DEFAULT_POLICY, ...parsed };
  } catch {
    throw new AfsError("IO_ERROR", `workspace ${workspace} has an unreadable versioning policy; set it again`, {
      workspace,
    });
  }
}

/** The changes `afs ws versioning` may ask for; unnamed fields keep their current value. */
export interface PolicyChange {
  keepDays?: number;
  keepVersions?: number;
  /** true: versioning off; false: back on. */
  off?: boolean;
}

const whole = (name: string, value: number, max: number): number => {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new AfsError("INVALID_ARGUMENT", `${name} must be a whole number from 0 to ${max}, not ${value}`);
  }
  return value;
};

export async function changePolicy(store: Store, workspace: string, change: PolicyChange): Promise<VersioningPolicy> {
  const current = await readPolicy(store, workspace);
  const next: VersioningPolicy = {
    enabled: change.off === undefined ? current.enabled : !change.off,
    keepDays: change.keepDays === undefined ? current.keepDays : whole("keep-days", change.keepDays, MAX_DAYS),
    keepVersions:
      change.keepVersions === undefined
        ? current.keepVersions
        : whole("keep-versions", change.keepVersions, MAX_VERSIONS),
  };
  // Asking for a window or a count turns versioning back on: that is what the asker means.
  if (change.off === undefined && (change.keepDays !== undefined || change.keepVersions !== undefined)) {
    next.enabled = true;
  }
  await store.setWorkspaceSetting(workspace, VERSIONING_SETTING, JSON.stringify(next));
  return next;
}

/** What gc keeps for history, and why. */
export interface Retained {
  blobs: Set<Hash>;
  /** Workspaces whose policy kept something, with how many distinct versions. */
  byWorkspace: Record<string, number>;
}

const PAGE = 5000;

/**
 * The blobs every workspace's policy keeps readable at `now`. Reads each workspace's log from the
 * first event inside its window (found by bisecting on time: events are appended in time order),
 * or the whole log when a per-path count is asked for.
 */
export async function retainedVersions(store: Store, now = Date.now()): Promise<Retained> {
  const out: Retained = { blobs: new Set(), byWorkspace: {} };
  for (const ws of await store.listWorkspaces()) {
    const policy = await readPolicy(store, ws.name);
    if (!policy.enabled || (policy.keepDays === 0 && policy.keepVersions === 0)) continue;
    const since = policy.keepDays > 0 ? now - policy.keepDays * DAY_MS : Number.POSITIVE_INFINITY;
    const kept = new Set<Hash>();
    const keep = (e: EventRecord): void => {
      if (e.oldHash) kept.add(e.oldHash);
      if (e.newHash) kept.add(e.newHash);
    };
    if (policy.keepVersions > 0) {
      // Newest versions per path: the log read whole, each path's last N distinct hashes kept.
      const newest = new Map<string, Hash[]>();
      for await (const e of eventsAfter(store, ws.name, 0)) {
        if (e.time >= since) keep(e);
        for (const h of [e.oldHash, e.newHash]) {
          if (!h || e.op === "checkpoint" || e.op === "restore") continue;
          const list = newest.get(e.path) ?? [];
          if (list[list.length - 1] !== h) list.push(h);
          if (list.length > policy.keepVersions) list.shift();
          newest.set(e.path, list);
        }
      }
      for (const list of newest.values()) for (const h of list) kept.add(h);
    } else {
      const from = await firstSeqAtOrAfter(store, ws.name, ws.revision, since);
      for await (const e of eventsAfter(store, ws.name, from - 1)) keep(e);
    }
    for (const h of kept) out.blobs.add(h);
    if (kept.size > 0) out.byWorkspace[ws.name] = kept.size;
  }
  return out;
}

/** A workspace's events after `after`, but for checkpoints and restores (they name root trees, not versions). */
async function* eventsAfter(store: Store, workspace: string, after: number): AsyncIterable<EventRecord> {
  let next = after;
  for (;;) {
    const page = await store.listEvents(workspace, next, PAGE);
    for (const e of page) {
      if (e.op !== "checkpoint" && e.op !== "restore") yield e;
      next = e.seq;
    }
    if (page.length < PAGE) return;
  }
}

/** The smallest seq whose event is at or after `since` (revision + 1 when none is). */
async function firstSeqAtOrAfter(store: Store, workspace: string, revision: number, since: number): Promise<number> {
  let lo = 1;
  let hi = revision + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const [e] = await store.listEvents(workspace, mid - 1, 1);
    if (!e || e.time >= since) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
