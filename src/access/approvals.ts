// Approval policy for what an agent asks to do on a person's files: allow, deny, or ask someone (on
// the terminal, or in the afs console through the store: console-approvals.ts).
// Every face that lets an agent change files (ACP today, the broker next) decides here, and every
// decision is kept in a bounded log so a long session never grows memory.
import { AfsError } from "../core/errors.js";

export const APPROVAL_MODES = ["allow", "deny", "ask", "console"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export interface ApprovalRequest {
  /** A file write, or a permission the agent asks for before running a tool. */
  kind: "write" | "permission";
  session: string;
  /** What the agent wants, in one line ("write /src/a.ts", a tool call's title). */
  title: string;
  /** Host paths concerned, when known. */
  paths: readonly string[];
  /** A unified diff of the change, when known, for a person to read before answering. */
  diff?: string;
}

export interface ApprovalDecision extends ApprovalRequest {
  allowed: boolean;
  /** What the person said with the answer, when they said anything. */
  note?: string;
  /** "policy" when the mode decided, "person" when the ask callback did, "grant" when an earlier approval covered it. */
  by: "policy" | "person" | "grant";
  time: number;
}

/** A person's answer in full: which of the paths they allowed (all when absent), and their note. */
export interface PersonAnswer {
  allowed: boolean;
  paths?: readonly string[];
  note?: string;
  /** "grant" when an allow the person gave earlier for the session answered instead of them. */
  by?: "person" | "grant";
}

/** Asks a person (a terminal prompt, an editor dialog, the console); true allows. */
export type AskPerson = (request: ApprovalRequest) => Promise<boolean | PersonAnswer>;

export const parseApprovalMode = (value: string): ApprovalMode => {
  if ((APPROVAL_MODES as readonly string[]).includes(value)) return value as ApprovalMode;
  throw new AfsError(
    "INVALID_ARGUMENT",
    `unknown approval mode ${JSON.stringify(value)}; choose one of ${APPROVAL_MODES.join(", ")}`,
  );
};

const DEFAULT_LOG_SIZE = 1000;

export class Approvals {
  private readonly log: ApprovalDecision[] = [];
  // Paths a person already approved through a permission request, per session: the write that
  // carries out an approved tool call is not asked about a second time.
  private readonly granted = new Map<string, Set<string>>();

  constructor(
    readonly mode: ApprovalMode,
    private readonly options: { ask?: AskPerson; onDecision?: (d: ApprovalDecision) => void; logSize?: number } = {},
  ) {
    if (this.asks && !options.ask) {
      throw new AfsError("INVALID_ARGUMENT", `approval mode ${mode} needs someone to ask; use allow or deny instead`);
    }
  }

  /** Whether a person answers (ask, console) rather than a fixed policy: they need a diff to read. */
  get asks(): boolean {
    return this.mode === "ask" || this.mode === "console";
  }

  async decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    let allowed: boolean;
    let by: ApprovalDecision["by"] = "policy";
    let note: string | undefined;
    if (!this.asks) allowed = this.mode === "allow";
    else if (request.kind === "write" && this.takeGrant(request)) {
      allowed = true;
      by = "grant";
    } else {
      const raw = await (this.options.ask as AskPerson)(request);
      const answer: PersonAnswer = typeof raw === "boolean" ? { allowed: raw } : raw;
      allowed = answer.allowed;
      by = answer.by ?? "person";
      note = answer.note;
      if (allowed && request.kind === "permission") this.grant(request.session, answer.paths ?? request.paths);
    }
    const decision: ApprovalDecision = { ...request, allowed, by, time: Date.now(), ...(note ? { note } : {}) };
    this.log.push(decision);
    if (this.log.length > (this.options.logSize ?? DEFAULT_LOG_SIZE)) this.log.shift();
    this.options.onDecision?.(decision);
    return decision;
  }

  /** The newest decisions, oldest first (at most the log size). */
  decisions(): readonly ApprovalDecision[] {
    return this.log;
  }

  private grant(session: string, granted: readonly string[]): void {
    const paths = this.granted.get(session) ?? new Set<string>();
    for (const p of granted) paths.add(p);
    this.granted.set(session, paths);
  }

  private takeGrant(request: ApprovalRequest): boolean {
    const paths = this.granted.get(request.session);
    if (!paths || request.paths.length === 0 || !request.paths.every((p) => paths.has(p))) return false;
    for (const p of request.paths) paths.delete(p);
    return true;
  }
}
