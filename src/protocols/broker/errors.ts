// The broker's error edge: every AfsError becomes one of the draft's seven errors through
// BROKER_ERROR_FOR (wire.ts), as a JSON-RPC error with the name in data.code and the afs code in
// data.afsCode. Malformed params stay -32602. Messages never carry file content.
import { ZodError } from "zod";
import { AfsError, toAfsError } from "../../core/errors.js";
import { issuesText } from "../../core/schema-issues.js";
import { BROKER_ERROR_FOR, BROKER_ERRORS, type BrokerErrorName } from "./wire.js";

export interface BrokerErrorData {
  code: BrokerErrorName;
  afsCode: string;
  path?: string;
  retryAfterMs?: number;
  [key: string]: unknown;
}

export interface BrokerError {
  code: number;
  message: string;
  data: BrokerErrorData;
}

const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
// Details that are safe to pass on: volume paths and figures, never content or host paths.
const PASSED = ["path", "retryAfterMs", "size", "limit", "expectedOffset", "expected_sha256", "actual_sha256"];

export function toBrokerError(e: unknown): BrokerError {
  if (e instanceof ZodError) {
    return {
      code: INVALID_PARAMS,
      message: `invalid params: ${issuesText(e.issues)}`,
      data: { code: "INVALID_PATH", afsCode: "INVALID_ARGUMENT" },
    };
  }
  const err = e instanceof AfsError ? e : toAfsError(e);
  // Anything not raised as an AfsError may carry a host path or bytes in its message: keep it generic.
  const message = e instanceof AfsError ? err.message : `the file operation failed (${err.code})`;
  const name = BROKER_ERROR_FOR[err.code];
  const data: BrokerErrorData = { code: name, afsCode: err.code };
  for (const key of PASSED) if (err.details[key] !== undefined) data[key] = err.details[key];
  const code = err.details.invalidParams ? INVALID_PARAMS : err.details.method ? METHOD_NOT_FOUND : BROKER_ERRORS[name];
  return { code, message, data };
}
