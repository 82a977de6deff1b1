// The CLI's error edge: every failure becomes one line on stderr and an exit status read from
// one table keyed by AfsError code, so scripts can tell "not found" from "conflict".
import { CommanderError } from "commander";
import { AfsError, type ErrorCode, type NextStep, toAfsError, withNextStep } from "../core/errors.js";
import { isSchemaError, issuesText, type SchemaIssue } from "../core/schema-issues.js";

/** Exit statuses. 0 is success; USAGE covers bad flags, bad names and bad paths alike. */
export const EXIT_CODES: Readonly<Record<ErrorCode | "USAGE", number>> = {
  INTERNAL: 1,
  IO_ERROR: 1,
  USAGE: 2,
  INVALID_ARGUMENT: 2,
  INVALID_PATH: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  ALREADY_EXISTS: 4,
  PERMISSION_DENIED: 5,
  QUOTA_EXCEEDED: 6,
  TIMEOUT: 7,
};

/** Where an error points a person next, in CLI commands. */
export const CLI_NEXT_STEPS: Readonly<Record<NextStep, string>> = {
  "list-workspaces": "see afs ws list",
  "list-checkpoints": "see afs cp list",
  "list-templates": "see afs ws list (templates show their slug)",
  "list-tokens": "see afs token list",
};

/** Raised by commands that finished but must report failure (fsck with problems). */
export class ExitStatus extends Error {
  constructor(readonly status: number) {
    super(`exit ${status}`);
  }
}

/** Names the CLI uses for an operation's arguments, so zod messages speak in flags. */
export type FlagNames = Readonly<Record<string, string>>;

/** Turns a schema failure into INVALID_ARGUMENT, naming the flag or argument the user typed. */
export function fromZod(e: { issues: readonly SchemaIssue[] }, flags: FlagNames = {}): AfsError {
  return new AfsError("INVALID_ARGUMENT", issuesText(e.issues, flags));
}

/** Prints the error on `to`'s stderr (with its stack and details when `debug`: AFS_DEBUG=1) and returns the exit status for it. */
export function report(e: unknown, to: { warn(text: string): void }, debug: boolean): number {
  const warn = to.warn;
  if (e instanceof ExitStatus) return e.status;
  if (e instanceof CommanderError) {
    // commander already printed its one line; help and --version are not failures.
    return e.exitCode === 0 ? 0 : EXIT_CODES.USAGE;
  }
  // Told by shape (isSchemaError), so the error edge of every command does not load zod (~100 ms).
  const err = isSchemaError(e) ? fromZod(e) : toAfsError(e);
  warn(`afs: ${withNextStep(err, CLI_NEXT_STEPS)} [${err.code}]\n`);
  if (debug) {
    warn(`${(e instanceof Error && e.stack) || String(e)}\n`);
    if (Object.keys(err.details).length > 0) warn(`${JSON.stringify(err.details)}\n`);
  }
  return EXIT_CODES[err.code];
}
