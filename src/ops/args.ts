// Argument fragments the operations share, so every tool describes a path or a hash the same way.
// The texts are written for an AI model: MCP tool definitions reuse them verbatim.
import { z } from "zod";

export const pathArg = z
  .string()
  .describe(
    'Absolute path inside the volume, e.g. "/src/main.go". A relative path is taken from "/"; ".." may not climb above "/".',
  );

export const dirPathArg = z
  .string()
  .optional()
  .describe('Directory (or file) to start from, absolute inside the volume (default "/").');

export const expectedSha256Arg = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, "expected_sha256 must be 64 hex digits (the sha256 returned by read or lines)")
  .optional()
  .describe(
    "The sha256 returned when you last read this file. If the file has changed since, nothing is written and a CONFLICT error is returned; read it again and retry. Omit to edit whatever is there now.",
  );

export const encodingArg = z
  .enum(["text", "base64"])
  .optional()
  .describe('"text" (default): content is UTF-8 text. "base64": content is base64-encoded bytes, for binary files.');

/** Text arguments arrive with any line ending; edits work on "\n" and re-apply the file's own. */
export const toLf = (s: string): string => s.replace(/\r\n/g, "\n");
