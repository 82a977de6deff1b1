// Connecting to Redis: the store URL (redis://[user:pass@]host:port/db, rediss:// for TLS), the
// password (URL or AFS_REDIS_PASSWORD, never shown), one clear error when the server cannot be
// reached, the durability check at open, and the small slice of node-redis the store uses.

import { isIP } from "node:net";
import { AfsError, type ErrorCode } from "../../core/errors.js";
import type { Env } from "../../core/settings.js";
import { maskStoreUrl } from "../url.js";

/** Everything the store needs from a node-redis client; nothing else of its types leaks in. */
export interface RedisClientSlice {
  connect(): Promise<unknown>;
  close(): Promise<void>;
  destroy(): void;
  sendCommand<T>(args: ReadonlyArray<string | Buffer>): Promise<T>;
  on(event: "error" | "ready" | "end" | "reconnecting", listener: (arg?: unknown) => void): unknown;
  readonly isReady: boolean;
  readonly isOpen: boolean;
}

/** A reply with bulk strings as Buffers (the client is set up that way). */
export type Reply = null | number | string | Buffer | Reply[];

export interface RedisTarget {
  tls: boolean;
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  /** Key prefix from `?prefix=` (so several afs deployments can share one database), if given. */
  prefix?: string;
  /** The URL as shown anywhere: the password masked as ***. */
  shown: string;
}

const ACCEPTED = "use redis://[user:password@]host:port/db or rediss://… for TLS";
/** How long opening waits for the TCP (and TLS) handshake before giving up. */
export const CONNECT_TIMEOUT_MS = 3_000;
/** How long one command waits for its reply (a stopped or overloaded server) before TIMEOUT. */
export const COMMAND_TIMEOUT_MS = 30_000;

export function parseRedisUrl(url: string, env: Env = {}): RedisTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new AfsError("INVALID_ARGUMENT", `store URL is not a valid redis URL; ${ACCEPTED}`, {
      url: maskStoreUrl(url),
    });
  }
  const tls = u.protocol === "rediss:";
  if (!tls && u.protocol !== "redis:") {
    throw new AfsError("INVALID_ARGUMENT", `store URL has scheme ${u.protocol}; ${ACCEPTED}`);
  }
  // IPv6 literals come bracketed ([::1]); sockets want them bare.
  const host = u.hostname === "" ? "localhost" : u.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = u.port === "" ? 6379 : Number(u.port);
  const path = u.pathname.replace(/^\//, "");
  const db = path === "" ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0 || !/^\d*$/.test(path)) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `store URL names database ${JSON.stringify(path)}, not a number; ${ACCEPTED}`,
    );
  }
  const username = u.username === "" ? undefined : decodeURIComponent(u.username);
  const fromUrl = u.password === "" ? undefined : decodeURIComponent(u.password);
  const password = fromUrl ?? (env.AFS_REDIS_PASSWORD || undefined);
  const auth = username || fromUrl ? `${username ?? ""}${fromUrl ? ":***" : ""}@` : "";
  const unknown = [...u.searchParams.keys()].filter((k) => k !== "prefix");
  if (unknown.length > 0) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `store URL has unknown parameters (${unknown.join(", ")}); only ?prefix= is read`,
    );
  }
  const prefix = u.searchParams.get("prefix") ?? undefined;
  if (prefix !== undefined && !/^[A-Za-z0-9_.:-]+$/.test(prefix)) {
    throw new AfsError("INVALID_ARGUMENT", "a store URL's ?prefix= takes letters, digits and _ . : - only");
  }
  const shownHost = isIP(host) === 6 ? `[${host}]` : host;
  const query = prefix === undefined ? "" : `?prefix=${prefix}`;
  const shown = `${u.protocol}//${auth}${shownHost}:${port}/${db}${query}`;
  return { tls, host, port, db, username, password, prefix, shown };
}

export const where = (t: RedisTarget): string => (isIP(t.host) === 6 ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`);

/**
 * Opens a connected client; one IO_ERROR (or PERMISSION_DENIED) naming host and port when it cannot.
 * A `quiet` one (a second connection of the same store) leaves reporting a lost connection to the first.
 */
export async function connect(target: RedisTarget, { quiet = false } = {}): Promise<RedisClientSlice> {
  const redis = await import("redis");
  // The bundled CLI (esbuild) exposes a CommonJS package as its default export only.
  const { createClient } =
    typeof redis.createClient === "function" ? redis : (redis as unknown as { default: typeof redis }).default;
  let opened = false;
  let lastError: unknown;
  const client = createClient({
    socket: {
      host: target.host,
      port: target.port,
      ...(target.tls
        ? { tls: true as const, ...(isIP(target.host) === 0 ? { servername: target.host } : {}) }
        : { tls: false as const }),
      connectTimeout: CONNECT_TIMEOUT_MS,
      // At open one failure is final (the caller gets it at once); afterwards keep trying with a
      // capped backoff, so the process recovers by itself when Redis returns.
      reconnectStrategy: (retries: number, cause: Error) => (opened ? Math.min(50 * 2 ** retries, 2_000) : cause),
    },
    username: target.username,
    password: target.password,
    database: target.db,
    RESP: 2,
    // Commands while disconnected fail at once (IO_ERROR) instead of queueing: a queued script
    // write could land long after its caller gave up on it.
    disableOfflineQueue: true,
    commandOptions: { typeMapping: { 36: Buffer } },
  }) as unknown as RedisClientSlice;
  let warned = false;
  client.on("error", (e) => {
    lastError = e;
    if (opened && !warned && !quiet) {
      warned = true;
      process.stderr.write(`afs: lost the connection to Redis at ${where(target)} (${message(e)}); reconnecting\n`);
    }
  });
  client.on("ready", () => {
    if (warned) process.stderr.write(`afs: reconnected to Redis at ${where(target)}\n`);
    warned = false;
  });
  let timer: NodeJS.Timeout | undefined;
  // connectTimeout covers the TCP handshake only; a server that accepts but never answers (stopped,
  // overloaded) must not hold `afs` at open either.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer within ${2 * CONNECT_TIMEOUT_MS} ms`)),
      2 * CONNECT_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([client.connect(), deadline]).finally(() => clearTimeout(timer));
  } catch (e) {
    client.destroy();
    throw redisError(isReplyError(e) ? e : (lastError ?? e), target, "cannot connect to");
  }
  opened = true;
  return client;
}

/** Reply errors by their first word; anything else (sockets, timeouts) is IO_ERROR. */
const REPLY_ERRORS: Record<string, readonly [ErrorCode, string]> = {
  OOM: ["QUOTA_EXCEEDED", "is out of memory (maxmemory); raise maxmemory or free space"],
  NOAUTH: ["PERMISSION_DENIED", "needs a password: put it in the URL or AFS_REDIS_PASSWORD"],
  WRONGPASS: ["PERMISSION_DENIED", "refused the user name or password; check the URL or AFS_REDIS_PASSWORD"],
  NOPERM: ["PERMISSION_DENIED", "refused a command to this user; grant it the commands afs needs"],
  READONLY: ["IO_ERROR", "is a read-only replica; point afs at the primary"],
  MISCONF: ["IO_ERROR", "cannot persist (MISCONF); check its disk and logs"],
  LOADING: ["TIMEOUT", "is still loading its data; retry in a moment"],
  BUSY: ["TIMEOUT", "is busy running a script; retry"],
};

/** A command whose reply did not come in time: it may still run, so it is never resent. */
export function timeoutError(target: RedisTarget, ms: number): AfsError {
  return new AfsError(
    "TIMEOUT",
    `Redis at ${where(target)} did not answer within ${ms} ms (stopped or overloaded); a change may or may not have applied, so read before retrying it`,
    { host: target.host, port: target.port },
  );
}

export function redisError(e: unknown, target: RedisTarget, doing = "error from"): AfsError {
  if (e instanceof AfsError) return e;
  const text = message(e);
  if (e instanceof Error && isReplyError(e)) {
    const [code, advice] = REPLY_ERRORS[text.split(" ")[0] ?? ""] ?? ["IO_ERROR", "refused a command"];
    return new AfsError(code, `Redis at ${where(target)} ${advice} (${text})`, {
      host: target.host,
      port: target.port,
    });
  }
  return new AfsError(
    "IO_ERROR",
    `${doing} Redis at ${where(target)}: ${text}; check that redis-server is running there and the store URL (${target.shown})`,
    { host: target.host, port: target.port },
  );
}

/** node-redis marks server replies with ErrorReply subclasses (SimpleError, BlobError). */
const isReplyError = (e: unknown): boolean => inherits(e, "ErrorReply");

/** Whether `e` is an instance of node-redis's class `name`, without loading the client to ask. */
function inherits(e: unknown, name: string): boolean {
  if (typeof e !== "object" || e === null) return false;
  for (let p: object | null = Object.getPrototypeOf(e); p; p = Object.getPrototypeOf(p)) {
    if (p.constructor?.name === name) return true;
  }
  return false;
}

/** True for failures of the connection (not of the command): safe to retry a read after them. */
export function isConnectionError(e: unknown): boolean {
  return e instanceof Error && !(e instanceof AfsError) && !isReplyError(e);
}

function message(e: unknown): string {
  if (e instanceof AggregateError && e.errors.length > 0) return message(e.errors[0]);
  if (e instanceof Error) return e.message || (e as { code?: string }).code || e.constructor.name;
  return String(e);
}

/**
 * Settings that decide whether acknowledged writes survive; warned about once per process and
 * server. Process-wide on purpose: the warning is for the person reading this process's stderr,
 * who needs it once however many engines the process opens on that server.
 */
const warnedFor = new Set<string>();

export async function checkDurability(
  client: RedisClientSlice,
  target: RedisTarget,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<void> {
  const config = new Map<string, string>();
  try {
    // One parameter per call: several in one CONFIG GET needs Redis 7.
    for (const name of ["appendonly", "appendfsync", "maxmemory-policy"]) {
      const reply = await client.sendCommand<Reply>(["CONFIG", "GET", name]);
      if (Array.isArray(reply) && reply.length >= 2) config.set(name, String(reply[1]));
    }
  } catch {
    return; // CONFIG is often disabled on managed Redis; nothing to check then.
  }
  const appendonly = config.get("appendonly");
  const policy = config.get("maxmemory-policy");
  const fsync = config.get("appendfsync");
  if (appendonly === undefined || policy === undefined) return;
  if (appendonly === "yes" && policy === "noeviction") return;
  if (warnedFor.has(target.shown)) return;
  warnedFor.add(target.shown);
  warn(
    `afs: warning: Redis at ${where(target)} runs with appendonly ${appendonly}, appendfsync ${fsync ?? "?"}, ` +
      `maxmemory-policy ${policy}: acknowledged writes can be lost or evicted. Set appendonly yes, ` +
      "appendfsync always (everysec may lose about the last second of acknowledged writes on a crash) " +
      "and maxmemory-policy noeviction.",
  );
}
