// The approval queue: a process that needs a person's answer (afs broker --consent console, afs acp
// --approve console) writes its request to the store and polls for the decision, which any console
// sharing the store (another process, another machine on Redis) records. An allow may leave a grant
// (the broker's consent; an ACP "for the session"), listed and revocable; a revoked grant is seen on
// the next check, since every check reads the store.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import type { ApprovalRecord, ApprovalRegistry } from "../workspace/afs.js";

export const APPROVAL_KINDS = ["consent", "write", "permission"] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/** A diff larger than this is cut at a line boundary (and marked so): a person reads, not scrolls megabytes. */
export const MAX_DIFF_BYTES = 64 * 1024;
/** At most this many paths per request; a request naming more is refused, not silently cut. */
export const MAX_PATHS = 1000;
/** How long a request waits when its asker gives no limit. */
export const DEFAULT_WAIT_MS = 10 * 60 * 1000;
/** How often a waiting process looks at the store: well under the one second a person may expect. */
export const DEFAULT_POLL_MS = 250;
/** Settled requests (and revoked grants) stay listed this long as recent decisions, then go. */
const KEEP_SETTLED_MS = 10 * 60 * 1000;

export const approvalRequestSchema = z.object({
  kind: z.enum(APPROVAL_KINDS),
  /** One line: what is asked ("write /src/a.ts", "read project/src"). */
  title: z.string(),
  /** The asker's own words for why, when it gave any. */
  message: z.string(),
  /** Who asks: the process ("afs broker", pid), the agent or server, the machine. */
  process: z.string(),
  pid: z.number().int(),
  agent: z.string(),
  machine: z.string(),
  /** The ACP session the request belongs to, when it does. */
  session: z.string().nullable(),
  /** The afs workspace concerned, when there is one. */
  workspace: z.string().nullable(),
  /** The roots the asker serves (broker roots, the ACP project directory). */
  roots: z.array(z.string()),
  /** The paths asked for (consent keys, host paths). */
  paths: z.array(z.string()),
  /** The same places as host directories, where known (for a person to recognise). */
  hostPaths: z.array(z.string().nullable()),
  /** A unified diff of the change, for writes and permissions that carry one. */
  diff: z.string().nullable(),
  diffTruncated: z.boolean(),
  expiresAt: z.number(),
});
export type ApprovalRequestData = z.infer<typeof approvalRequestSchema>;

export const OUTCOMES = ["allowed", "denied", "expired", "cancelled"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const approvalDecisionSchema = z.object({
  outcome: z.enum(OUTCOMES),
  /** The paths allowed (a subset of those asked); [] unless allowed. */
  paths: z.array(z.string()),
  /** Whether the allow stays as a grant until revoked (always for broker consent). */
  grant: z.boolean(),
  note: z.string().nullable(),
  /** Who decided: the console's actor, or the asking process itself for expired and cancelled. */
  by: z.string(),
  at: z.number(),
});
export type ApprovalDecisionData = z.infer<typeof approvalDecisionSchema>;

export type ApprovalState = "pending" | Outcome;

/** One request as people and tools see it. */
export interface ApprovalView extends ApprovalRequestData {
  id: string;
  createdAt: number;
  state: ApprovalState;
  decision: ApprovalDecisionData | null;
  revokedAt: number | null;
}

/** What an asker says about itself and its request; the queue adds who, when and until when. */
export interface ApprovalAsk {
  kind: ApprovalKind;
  title: string;
  message?: string;
  process: string;
  agent: string;
  session?: string | null;
  workspace?: string | null;
  roots?: readonly string[];
  paths: readonly string[];
  hostPaths?: readonly (string | null)[];
  diff?: string | null;
  /** Default DEFAULT_WAIT_MS. */
  timeoutMs?: number;
}

export interface DecideArgs {
  /** "all" allows every path asked, a list some of them, false denies. */
  allow: "all" | readonly string[] | false;
  /** Keep the allow as a grant until revoked (broker consent always does). */
  grant?: boolean;
  note?: string | null;
  by: string;
}

export interface ApprovalList {
  pending: ApprovalView[];
  grants: ApprovalView[];
  /** Decided, expired or cancelled lately, newest first. */
  recent: ApprovalView[];
}

/** Cuts a diff at the last line boundary under `max` bytes. */
export function capDiff(diff: string, max = MAX_DIFF_BYTES): { diff: string; truncated: boolean } {
  const bytes = Buffer.from(diff, "utf8");
  if (bytes.length <= max) return { diff, truncated: false };
  const cut = bytes.subarray(0, max).toString("utf8");
  const nl = cut.lastIndexOf("\n");
  return { diff: nl > 0 ? cut.slice(0, nl + 1) : cut.replace(/\uFFFD$/, ""), truncated: true };
}

export class ApprovalQueue {
  private readonly pollMs: number;

  constructor(
    private readonly registry: ApprovalRegistry,
    options: { pollMs?: number } = {},
  ) {
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  }

  /** Records a waiting request; returns its id. */
  async submit(ask: ApprovalAsk): Promise<string> {
    if (ask.paths.length > MAX_PATHS) {
      throw new AfsError("QUOTA_EXCEEDED", `a request may name at most ${MAX_PATHS} paths; ask for their directory`);
    }
    const now = Date.now();
    const diff = ask.diff ? capDiff(ask.diff) : null;
    const request: ApprovalRequestData = {
      kind: ask.kind,
      title: ask.title,
      message: ask.message ?? "",
      process: ask.process,
      pid: process.pid,
      agent: ask.agent,
      machine: hostname(),
      session: ask.session ?? null,
      workspace: ask.workspace ?? null,
      roots: [...(ask.roots ?? [])],
      paths: [...ask.paths],
      hostPaths: ask.hostPaths ? [...ask.hostPaths] : ask.paths.map(() => null),
      diff: diff?.diff ?? null,
      diffTruncated: diff?.truncated ?? false,
      expiresAt: now + (ask.timeoutMs ?? DEFAULT_WAIT_MS),
    };
    const id = randomUUID();
    await this.registry.putApproval({ id, createdAt: now, request: JSON.stringify(request) });
    return id;
  }

  /**
   * Waits for the decision of `id`, looking every pollMs. At its expiry the request is settled as
   * expired (TIMEOUT); when `signal` aborts, as cancelled (the signal's reason is thrown). A
   * decision that lands first wins either race: the store keeps the first one.
   */
  async wait(id: string, signal?: AbortSignal): Promise<ApprovalDecisionData> {
    for (;;) {
      const view = await this.get(id);
      if (view.decision) return view.decision;
      if (signal?.aborted) {
        const settled = await this.settle(id, "cancelled");
        if (settled.outcome !== "cancelled") return settled;
        throw signal.reason instanceof AfsError
          ? signal.reason
          : new AfsError("TIMEOUT", "the request was cancelled before anyone decided");
      }
      if (Date.now() >= view.expiresAt) {
        const settled = await this.settle(id, "expired");
        if (settled.outcome !== "expired") return settled;
        throw new AfsError(
          "TIMEOUT",
          `nobody decided in the afs console within ${Math.round((view.expiresAt - view.createdAt) / 1000)} s; the request was refused`,
          { approval_id: id },
        );
      }
      await sleep(Math.min(this.pollMs, Math.max(1, view.expiresAt - Date.now())), undefined, {
        ...(signal ? { signal } : {}),
      }).catch(() => undefined);
    }
  }

  /** submit, then wait; a cancelled or expired request is settled as such before the error. */
  async ask(ask: ApprovalAsk, signal?: AbortSignal): Promise<{ id: string; decision: ApprovalDecisionData }> {
    const id = await this.submit(ask);
    return { id, decision: await this.wait(id, signal) };
  }

  async get(id: string): Promise<ApprovalView> {
    const record = await this.registry.getApproval(id);
    if (!record) throw notFound(id);
    return view(record);
  }

  /** Pending requests, active grants and recent decisions; clears away what is long settled. */
  async list(): Promise<ApprovalList> {
    const now = Date.now();
    const out: ApprovalList = { pending: [], grants: [], recent: [] };
    const stale: string[] = [];
    const here = hostname();
    for (const record of await this.registry.listApprovals()) {
      let v: ApprovalView;
      try {
        v = view(record);
      } catch {
        stale.push(record.id); // written by another version, or damaged: nobody can answer it
        continue;
      }
      // An asker on this machine that is gone (killed before it could clean up) waits for nothing
      // and holds nothing: settle for it. Askers elsewhere are left to their expiry.
      if (v.machine === here && v.pid !== process.pid && !alive(v.pid)) {
        if (v.state === "pending") v = { ...v, ...(await this.settled(v.id, "cancelled")) };
        else if (isActiveGrant(v)) {
          await this.registry.revokeApproval(v.id, now);
          v = { ...v, revokedAt: now };
        }
      }
      // A request whose asker vanished (killed) is never settled by it: it reads as expired.
      if (v.state === "pending" && v.expiresAt + KEEP_SETTLED_MS < now) stale.push(v.id);
      else if (v.state === "pending" && v.expiresAt < now) out.recent.push({ ...v, state: "expired" });
      else if (v.state === "pending") out.pending.push(v);
      else if (isActiveGrant(v)) out.grants.push(v);
      else if (settledAt(v) + KEEP_SETTLED_MS < now) stale.push(v.id);
      else out.recent.push(v);
    }
    if (stale.length > 0) await this.registry.deleteApprovals(stale).catch(() => 0);
    // The oldest waiting request first: it has waited longest.
    out.pending.reverse();
    return out;
  }

  /** Records a person's decision; CONFLICT when the request was already settled. */
  async decide(id: string, args: DecideArgs): Promise<ApprovalView> {
    const v = await this.get(id);
    if (v.state !== "pending") throw settledAlready(v);
    if (v.expiresAt < Date.now())
      throw new AfsError("CONFLICT", `request ${id} expired before the decision`, { approval_id: id });
    let paths: string[] = [];
    if (args.allow === "all") paths = [...v.paths];
    else if (args.allow !== false) {
      const unknown = args.allow.filter((p) => !v.paths.includes(p));
      if (unknown.length > 0) {
        throw new AfsError(
          "INVALID_ARGUMENT",
          `${unknown[0]} was not asked for; allow some of: ${v.paths.join(", ")}`,
          { approval_id: id },
        );
      }
      if (args.allow.length === 0) {
        throw new AfsError("INVALID_ARGUMENT", "allow at least one path, or deny the request", { approval_id: id });
      }
      paths = [...new Set(args.allow)];
    }
    const decision: ApprovalDecisionData = {
      outcome: args.allow === false ? "denied" : "allowed",
      paths,
      // Broker consent is a grant by nature: the server goes on using what it was allowed.
      grant: args.allow !== false && (v.kind === "consent" || args.grant === true),
      note: args.note?.trim() ? args.note.trim() : null,
      by: args.by,
      at: Date.now(),
    };
    if (!(await this.registry.decideApproval(id, JSON.stringify(decision)))) throw settledAlready(await this.get(id));
    return { ...v, state: decision.outcome, decision };
  }

  /** Ends an active grant at once: the asker's next check sees it. NOT_FOUND when no such grant stands. */
  async revokeGrant(id: string): Promise<ApprovalView> {
    const v = await this.get(id);
    if (!isActiveGrant(v)) {
      throw new AfsError("NOT_FOUND", `no active grant ${id}; list the grants with approval_list`, { approval_id: id });
    }
    await this.registry.revokeApproval(id, Date.now());
    return this.get(id);
  }

  /** Whether grant `id` still stands (read from the store: a revocation anywhere counts at once). */
  async grantStands(id: string): Promise<boolean> {
    const record = await this.registry.getApproval(id);
    if (!record) return false;
    try {
      return isActiveGrant(view(record));
    } catch {
      return false;
    }
  }

  /** The asker gives up on `id` (it is stopping): settled as cancelled unless decided first. */
  async cancel(id: string): Promise<ApprovalDecisionData> {
    return this.settle(id, "cancelled");
  }

  /** The asker's side of a grant's end (its process stops): the grant leaves the list. */
  async endGrant(id: string): Promise<void> {
    await this.registry.revokeApproval(id, Date.now());
  }

  private async settled(
    id: string,
    outcome: "expired" | "cancelled",
  ): Promise<Pick<ApprovalView, "state" | "decision">> {
    const decision = await this.settle(id, outcome);
    return { state: decision.outcome, decision };
  }

  /** Settles `id` as expired or cancelled unless a decision got there first; returns what stands. */
  private async settle(id: string, outcome: "expired" | "cancelled"): Promise<ApprovalDecisionData> {
    const decision: ApprovalDecisionData = { outcome, paths: [], grant: false, note: null, by: "afs", at: Date.now() };
    if (await this.registry.decideApproval(id, JSON.stringify(decision))) return decision;
    const v = await this.get(id);
    return v.decision ?? decision;
  }
}

function view(record: ApprovalRecord): ApprovalView {
  const request = approvalRequestSchema.parse(JSON.parse(record.request));
  const decision = record.decision === null ? null : approvalDecisionSchema.parse(JSON.parse(record.decision));
  return {
    ...request,
    id: record.id,
    createdAt: record.createdAt,
    state: decision?.outcome ?? "pending",
    decision,
    revokedAt: record.revokedAt,
  };
}

/** Whether process `pid` of this machine still runs (EPERM: it runs as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const isActiveGrant = (v: ApprovalView): boolean =>
  v.decision?.outcome === "allowed" && v.decision.grant && v.revokedAt === null;

const settledAt = (v: ApprovalView): number => Math.max(v.decision?.at ?? v.createdAt, v.revokedAt ?? 0);

const notFound = (id: string): AfsError =>
  new AfsError("NOT_FOUND", `no approval request ${id}; list them with approval_list`, { approval_id: id });

const settledAlready = (v: ApprovalView): AfsError =>
  new AfsError(
    "CONFLICT",
    `request ${v.id} was already settled (${v.state}${v.decision?.by && v.decision.by !== "afs" ? ` by ${v.decision.by}` : ""})`,
    { approval_id: v.id },
  );

/** Where a waiting process tells its person to decide: the console's /approvals page when it knows its address. */
export function whereToDecide(consoleUrl: string | undefined): string {
  if (!consoleUrl) return "waiting for a decision in the afs console (afs console, or afs serve's /approvals page)";
  try {
    return `waiting for a decision in the afs console: ${new URL("/approvals", consoleUrl).href}`;
  } catch {
    return "waiting for a decision in the afs console";
  }
}
