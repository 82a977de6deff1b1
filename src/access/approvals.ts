// Approval policy for what an agent asks to do on a person's files: allow, deny, or ask someone.
// Every face that lets an agent change files (ACP today, the broker next) decides here, and every
// decision is kept in a bounded log so a long session never grows memory.
import { AfsError } from "../core/errors.js";

export const APPROVAL_MODES = ["allow", "deny", "ask"] as const;
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
  /** "policy" when the mode decided, "person" when the ask callback did, "grant" when an earlier approval covered it. */
  by: "policy" | "person" | "grant";
  time: number;
}

/** Asks a person (a terminal prompt, an editor dialog); true allows. */
export type AskPerson = (request: ApprovalRequest) => Promise<boolean>;

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
    if (mode === "ask" && !options.ask) {
      throw new AfsError("INVALID_ARGUMENT", "approval mode ask needs someone to ask; use allow or deny instead");
    }
  }

  async decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    let allowed: boolean;
    let by: ApprovalDecision["by"] = "policy";
    if (this.mode !== "ask") allowed = this.mode === "allow";
    else if (request.kind === "write" && this.takeGrant(request)) {
      allowed = true;
      by = "grant";
    } else {
      allowed = await (this.options.ask as AskPerson)(request);
      by = "person";
      if (allowed && request.kind === "permission") this.grant(request);
    }
    const decision: ApprovalDecision = { ...request, allowed, by, time: Date.now() };
    this.log.push(decision);
    if (this.log.length > (this.options.logSize ?? DEFAULT_LOG_SIZE)) this.log.shift();
    this.options.onDecision?.(decision);
    return decision;
  }

  /** The newest decisions, oldest first (at most the log size). */
  decisions(): readonly ApprovalDecision[] {
    return this.log;
  }

  private grant(request: ApprovalRequest): void {
    const paths = this.granted.get(request.session) ?? new Set<string>();
    for (const p of request.paths) paths.add(p);
    this.granted.set(request.session, paths);
  }

  private takeGrant(request: ApprovalRequest): boolean {
    const paths = this.granted.get(request.session);
    if (!paths || request.paths.length === 0 || !request.paths.every((p) => paths.has(p))) return false;
    for (const p of request.paths) paths.delete(p);
    return true;
  }
}
