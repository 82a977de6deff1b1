// grep's paging cursor: where the last page ended (a file, and a line in it), tied to the search
// it came from so that a cursor is never applied to different arguments by mistake.
import { createHash } from "node:crypto";
import { AfsError } from "../core/errors.js";

export interface GrepCursor {
  /** The last file the page reported. */
  path: string;
  /** The last line reported in it, or null when the whole file was reported (files, counts). */
  line: number | null;
  /** Lines selected in that file so far (max_count keeps counting across pages). */
  selected: number;
}

/** A short digest of the arguments that decide the results (everything but limit and cursor). */
export function searchFingerprint(args: Record<string, unknown>): string {
  const keys = Object.keys(args)
    .filter((k) => args[k] !== undefined)
    .sort();
  const canonical = JSON.stringify(keys.map((k) => [k, args[k]]));
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}

export function encodeCursor(c: GrepCursor, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ v: 1, f: fingerprint, p: c.path, l: c.line, n: c.selected })).toString(
    "base64url",
  );
}

export function decodeCursor(cursor: string, fingerprint: string): GrepCursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    raw = null;
  }
  const c = raw as { v?: unknown; f?: unknown; p?: unknown; l?: unknown; n?: unknown } | null;
  if (
    c?.v !== 1 ||
    typeof c.p !== "string" ||
    !(c.l === null || Number.isSafeInteger(c.l)) ||
    !Number.isSafeInteger(c.n)
  ) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "cursor is not one grep returned; pass the cursor of a truncated result as is",
    );
  }
  if (c.f !== fingerprint) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "cursor belongs to a search with different arguments; repeat the same pattern, path and options with it (only limit may change), or drop it to start over",
    );
  }
  return { path: c.p, line: c.l as number | null, selected: c.n as number };
}
