// The "console" answer of `afs broker --consent console` and `afs acp --approve console`: each
// question goes to the approval queue in the store and waits there for a person in the afs console
// (any process or machine sharing the store). Grants the person leaves are checked against the store
// on every use, so a revocation in the console applies to the next operation; a watcher also
// notices it within a poll, so running work can be stopped.

import type { ApprovalAsk, ApprovalDecisionData, ApprovalQueue } from "./approval-queue.js";
import type { ApprovalRequest, PersonAnswer } from "./approvals.js";
import { type ApprovedPath, type ConsentMode, type ConsentProvider, covers } from "./consent.js";

export interface ConsoleAskOptions {
  /** The asking process, as the console shows it ("afs broker", "afs acp"). */
  process: string;
  /** Told once per question: where the person decides (whereToDecide). */
  onWaiting?: (id: string, title: string) => void;
  /** How long a question waits (default the queue's). */
  timeoutMs?: number;
  /** How often held grants are checked for revocation (default 500 ms). */
  watchMs?: number;
}

interface Held {
  id: string;
  paths: readonly string[];
  mode: ConsentMode;
  /** The ACP session a "for the session" write grant belongs to. */
  session?: string;
}

/** What both console answers share: the queue, the grants held, the questions in flight. */
class ConsoleAsker {
  readonly held: Held[] = [];
  /** The questions in flight, with their ids once submitted. */
  private readonly waiting = new Map<AbortController, string | null>();
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly queue: ApprovalQueue,
    private readonly options: ConsoleAskOptions,
  ) {}

  async ask(
    ask: Omit<ApprovalAsk, "process">,
    signal?: AbortSignal,
  ): Promise<{ id: string; decision: ApprovalDecisionData }> {
    const controller = new AbortController();
    const stop = (): void => controller.abort(signal?.reason);
    signal?.addEventListener("abort", stop, { once: true });
    if (this.closed) controller.abort();
    this.waiting.set(controller, null);
    try {
      const id = await this.queue.submit({
        ...ask,
        process: this.options.process,
        ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
      });
      this.waiting.set(controller, id);
      this.options.onWaiting?.(id, ask.title);
      return { id, decision: await this.queue.wait(id, controller.signal) };
    } finally {
      signal?.removeEventListener("abort", stop);
      this.waiting.delete(controller);
    }
  }

  hold(grant: Held): void {
    this.held.push(grant);
    this.watch();
  }

  /** Whether some grant still standing in the store covers `path` for `mode` (and `session`, when given). */
  async stands(path: string, mode: ConsentMode, session?: string): Promise<boolean> {
    for (const g of this.held) {
      if (session !== undefined && g.session !== session) continue;
      if (!(g.mode === "write" || mode === "read")) continue;
      if (!g.paths.some((p) => covers(p, path))) continue;
      if (await this.queue.grantStands(g.id)) return true;
    }
    return false;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Polls the held grants; a revoked one is dropped and the listeners hear of it. */
  private watch(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.check(), this.options.watchMs ?? 500);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    let changed = false;
    for (const g of [...this.held]) {
      const stands = await this.queue.grantStands(g.id).catch(() => true); // a store hiccup revokes nothing
      if (!stands) {
        this.held.splice(this.held.indexOf(g), 1);
        changed = true;
      }
    }
    if (changed) for (const l of this.listeners) l();
  }

  /** Cancels the questions in flight and ends the grants held (they leave the console's list). */
  close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    // Settled here, not left to the waiting loops, so nothing stays listed as waiting once the store closes.
    const cancelling = [...this.waiting].map(([c, id]) => {
      c.abort();
      return id === null ? undefined : this.queue.cancel(id).catch(() => undefined);
    });
    const ending = this.held.splice(0).map((g) => this.queue.endGrant(g.id).catch(() => undefined));
    return Promise.all([...cancelling, ...ending]).then(() => undefined);
  }
}

/** afs broker's consent, answered in the console: an allow becomes a grant with the request's id. */
export function consoleConsent(
  queue: ApprovalQueue,
  options: ConsoleAskOptions,
): ConsentProvider & {
  /** Resolves once the questions are cancelled and the grants ended in the store. */
  closed(): Promise<void>;
} {
  const asker = new ConsoleAsker(queue, options);
  let closing: Promise<void> = Promise.resolve();
  return {
    kind: "console",
    decide: async (request, _canonical, signal) => {
      const roots = [...new Set(request.paths.map((p) => p.split("/")[0] as string))];
      const { id, decision } = await asker.ask(
        {
          kind: "consent",
          title: `file access for ${request.server}`,
          message: request.message,
          agent: request.server,
          roots,
          paths: request.paths,
          hostPaths: request.hostPaths,
        },
        signal,
      );
      if (decision.outcome !== "allowed") {
        const said = decision.note ? `: ${decision.note}` : "";
        return { approved: [], reason: `the request was ${decision.outcome} in the afs console${said}` };
      }
      const approved: ApprovedPath[] = decision.paths.map((path) => ({ path, mode: "write" }));
      asker.hold({ id, paths: decision.paths, mode: "write" });
      return { approved, grantId: id, ...(decision.note ? { reason: decision.note } : {}) };
    },
    permits: (key, mode) => asker.stands(key, mode),
    onChange: (listener) => asker.onChange(listener),
    close: () => {
      closing = asker.close();
    },
    closed: () => closing,
  };
}

/** afs acp's AskPerson in the console, and close() for the end of the session. */
export function consoleApprovals(
  queue: ApprovalQueue,
  options: ConsoleAskOptions & { agent: () => string; workspace?: string; roots?: readonly string[] },
): { ask: (request: ApprovalRequest) => Promise<PersonAnswer>; close(): Promise<void> } {
  const asker = new ConsoleAsker(queue, options);
  return {
    ask: async (request) => {
      // A write the person allowed for the session (and has not revoked) is not asked again.
      if (
        request.kind === "write" &&
        request.paths.length > 0 &&
        (await everyStands(asker, request.paths, request.session))
      ) {
        return { allowed: true, by: "grant" };
      }
      const { id, decision } = await asker.ask({
        kind: request.kind,
        title: request.title,
        agent: options.agent(),
        session: request.session,
        ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
        roots: options.roots ?? [],
        paths: request.paths,
        ...(request.diff ? { diff: request.diff } : {}),
      });
      const allowed = decision.outcome === "allowed";
      if (allowed && decision.grant) asker.hold({ id, paths: decision.paths, mode: "write", session: request.session });
      const note =
        decision.note ??
        (decision.outcome === "expired" || decision.outcome === "cancelled" ? decision.outcome : undefined);
      return { allowed, paths: decision.paths, ...(note ? { note } : {}) };
    },
    close: () => asker.close(),
  };
}

async function everyStands(asker: ConsoleAsker, paths: readonly string[], session: string): Promise<boolean> {
  for (const p of paths) if (!(await asker.stands(p, "write", session))) return false;
  return true;
}
