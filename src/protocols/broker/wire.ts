// The brokered-filesystem wire format (MCP Roots draft with client-brokered files/*): every method's
// params and result as zod schemas, the capability flags, and the error table. The host library,
// the `afs broker` proxy and the server-side helper all read these; nothing re-describes a message.
import { z } from "zod";
import type { ErrorCode } from "../../core/errors.js";

/** Declared in `roots` (the draft) and, because the official SDK strips unknown keys inside
 * `roots`, again under `experimental` so a stock SDK server can see it. */
export const BROKER_CAPABILITIES = {
  roots: { listChanged: true, filesystemBrokering: true },
  experimental: { filesystemBrokering: {} },
} as const;

export const METHODS = {
  rootsList: "roots/list",
  rootsListChanged: "notifications/roots/list_changed",
  consent: "files/consent",
  read: "files/read",
  write: "files/write",
  list: "files/list",
  create: "files/create",
  delete: "files/delete",
  rename: "files/rename",
  watch: "files/watch",
  unwatch: "files/unwatch",
  changed: "notifications/files/changed",
} as const;

export const DEFAULT_CHUNK_BYTES = 1024 * 1024;

export const encoding = z.enum(["utf-8", "base64"]);

export const consentParams = z.object({
  message: z.string(),
  requestedPaths: z.array(z.string()).min(1),
});
export const consentResult = z.object({
  granted: z.boolean(),
  approvedPaths: z.array(z.string()),
  /** The grant's id (afs extension), as the audit log names it. */
  consentId: z.string().optional(),
  /** Why less (or nothing) was granted, and how to allow it (afs extension). */
  message: z.string().optional(),
});

export const readParams = z.object({
  path: z.string(),
  encoding: encoding.optional(),
  offset: z.number().int().min(0).optional(),
  length: z.number().int().min(0).optional(),
});
export const readResult = z.object({
  content: z.string(),
  /** The whole file's size in bytes. */
  size: z.number(),
  mimeType: z.string(),
  encoding,
  offset: z.number(),
  /** Bytes this answer carries. */
  length: z.number(),
  eof: z.boolean(),
  /** The whole file's SHA-256, to pass back as expectedSha256. */
  sha256: z.string().optional(),
});

export const writeParams = z.object({
  path: z.string(),
  content: z.string(),
  encoding: encoding.optional(),
  /** false: the file must already exist (FILE_NOT_FOUND otherwise). Default true. */
  create: z.boolean().optional(),
  /** Chunked write: this chunk's byte offset; the file becomes visible whole when `final` lands. */
  offset: z.number().int().min(0).optional(),
  /** With offset: true on the last chunk (default true when offset is absent). */
  final: z.boolean().optional(),
  /** The content the file must have before this write, or CONCURRENCY_CONFLICT. */
  expectedSha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .optional(),
});
export const writeResult = z.object({
  path: z.string(),
  size: z.number(),
  sha256: z.string().nullable(),
  done: z.boolean(),
});

export const listParams = z.object({
  path: z.string(),
  recursive: z.boolean().optional(),
  includeHidden: z.boolean().optional(),
  cursor: z.string().optional(),
});
export const listEntry = z.object({
  path: z.string(),
  name: z.string(),
  type: z.enum(["file", "directory", "symlink"]),
  size: z.number(),
  modified: z.string(),
});
export const listResult = z.object({ entries: z.array(listEntry), nextCursor: z.string().optional() });

export const createParams = z.object({ path: z.string(), type: z.enum(["file", "directory"]) });
export const deleteParams = z.object({ path: z.string(), recursive: z.boolean().optional() });
export const renameParams = z.object({ oldPath: z.string(), newPath: z.string() });
export const pathResult = z.object({ path: z.string() });

export const watchEvent = z.enum(["created", "modified", "deleted", "renamed"]);
export const watchParams = z.object({
  path: z.string(),
  recursive: z.boolean().optional(),
  events: z.array(watchEvent).optional(),
});
export const watchResult = z.object({ watchId: z.string() });
export const unwatchParams = z.object({ watchId: z.string() });
export const changedParams = z.object({
  path: z.string(),
  event: watchEvent,
  timestamp: z.string(),
  watchId: z.string().optional(),
  /** For a rename seen as one event: where it came from. */
  oldPath: z.string().optional(),
});

export const rootsListResult = z.object({
  roots: z.array(z.object({ uri: z.string(), name: z.string().optional() })),
});

/** The draft's seven error names, as JSON-RPC codes outside the JSON-RPC (-32768..-32000) and MCP ranges. */
export const BROKER_ERRORS = {
  FILE_NOT_FOUND: -31001,
  PERMISSION_DENIED: -31002,
  INVALID_PATH: -31003,
  IO_ERROR: -31004,
  TIMEOUT: -31005,
  CONCURRENCY_CONFLICT: -31006,
  QUOTA_EXCEEDED: -31007,
} as const;
export type BrokerErrorName = keyof typeof BROKER_ERRORS;

/** Every afs error code as one of the seven (malformed params stay -32602 at the edge). */
export const BROKER_ERROR_FOR: Readonly<Record<ErrorCode, BrokerErrorName>> = {
  NOT_FOUND: "FILE_NOT_FOUND",
  ALREADY_EXISTS: "CONCURRENCY_CONFLICT",
  PERMISSION_DENIED: "PERMISSION_DENIED",
  INVALID_PATH: "INVALID_PATH",
  INVALID_ARGUMENT: "INVALID_PATH",
  CONFLICT: "CONCURRENCY_CONFLICT",
  QUOTA_EXCEEDED: "QUOTA_EXCEEDED",
  TIMEOUT: "TIMEOUT",
  IO_ERROR: "IO_ERROR",
  INTERNAL: "IO_ERROR",
};

/** Every method a server may call on the broker, with its params schema. */
export const REQUEST_PARAMS = {
  [METHODS.rootsList]: z.object({}).passthrough(),
  [METHODS.consent]: consentParams,
  [METHODS.read]: readParams,
  [METHODS.write]: writeParams,
  [METHODS.list]: listParams,
  [METHODS.create]: createParams,
  [METHODS.delete]: deleteParams,
  [METHODS.rename]: renameParams,
  [METHODS.watch]: watchParams,
  [METHODS.unwatch]: unwatchParams,
} as const;
export type BrokerMethod = keyof typeof REQUEST_PARAMS;

/**
 * The request schema an SDK Client registers a handler with: the literal method, params kept as
 * an object and checked by the host against REQUEST_PARAMS, so malformed params come back as the
 * broker's -32602 with data.code rather than the SDK's generic error.
 */
export const requestSchema = <M extends BrokerMethod>(method: M) =>
  z.object({ method: z.literal(method), params: z.record(z.string(), z.unknown()).optional() });
