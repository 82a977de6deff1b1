// Errors are values: one AfsError class with a code from a closed set. Ops throw them; each
// protocol edge (CLI, MCP, ACP, HTTP) maps the code once, never the message text.

export const ERROR_CODES = [
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "INVALID_PATH",
  "INVALID_ARGUMENT",
  "CONFLICT",
  "QUOTA_EXCEEDED",
  "TIMEOUT",
  "IO_ERROR",
  "INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Where a caller can look next. The message stays neutral; each face appends the step in its own
 * words from one table (the CLI names a command, MCP a tool the session has), so no face is told
 * about another's commands.
 */
export const NEXT_STEPS = ["list-workspaces", "list-checkpoints", "list-templates", "list-tokens"] as const;
export type NextStep = (typeof NEXT_STEPS)[number];

export class AfsError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly next: NextStep | undefined;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, next?: NextStep) {
    super(message);
    this.name = "AfsError";
    this.code = code;
    this.details = details;
    this.next = next;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return Object.keys(this.details).length > 0
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

/** The message with the face's words for its next step, when the face has any. */
export function withNextStep(err: AfsError, steps: Readonly<Partial<Record<NextStep, string>>>): string {
  const step = err.next === undefined ? undefined : steps[err.next];
  return step === undefined ? err.message : `${err.message}; ${step}`;
}

export const isAfsError = (e: unknown): e is AfsError => e instanceof AfsError;

/** Wraps anything thrown into an AfsError so edges only ever see one shape. */
export function toAfsError(e: unknown): AfsError {
  if (e instanceof AfsError) return e;
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case "ENOENT":
      return new AfsError("NOT_FOUND", `not found: ${err.path ?? err.message}`);
    case "EEXIST":
      return new AfsError("ALREADY_EXISTS", `already exists: ${err.path ?? err.message}`);
    case "EACCES":
    case "EPERM":
      return new AfsError("PERMISSION_DENIED", `permission denied: ${err.path ?? err.message}`);
    case "EISDIR":
      return new AfsError("INVALID_ARGUMENT", `is a directory: ${err.path ?? err.message}`);
    case "ENOTDIR":
      return new AfsError("INVALID_PATH", `not a directory: ${err.path ?? err.message}`);
    case "ENOTEMPTY":
      return new AfsError(
        "INVALID_ARGUMENT",
        `directory not empty: ${err.path ?? err.message}; pass recursive to delete it with its contents`,
      );
    default:
      return new AfsError("IO_ERROR", err?.message ?? String(e));
  }
}
