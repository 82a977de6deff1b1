// Turns a store URL (AFS_STORE, --store) into a Store: sqlite:/path/afs.db, file: URLs and bare
// paths open the embedded SQLite store, redis:// and rediss:// a Redis server; anything else is
// refused with the forms that work.
// Each store's module is imported only when its scheme is asked for, so a command that uses
// SQLite never loads the Redis client and the reverse.

import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AfsError } from "../core/errors.js";
import type { Env } from "../core/settings.js";
import { checkedStore, type StoreDriver } from "./checked-store.js";
import type { Store } from "./store.js";
import { maskStoreUrl } from "./url.js";

const ACCEPTED =
  "use sqlite:/abs/path/afs.db, sqlite:relative.db, file:///abs/path/afs.db, a plain file path or redis://host:port/db";

const invalid = (url: string, why: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `store URL ${JSON.stringify(maskStoreUrl(url))} ${why}; ${ACCEPTED}`, {
    url: maskStoreUrl(url),
  });

/** What each URL scheme opens; a bare path (no scheme) opens SQLite too. */
const SCHEMES: Record<string, (url: string, rest: string, options: OpenStoreOptions) => Promise<StoreDriver>> = {
  sqlite: (url, rest, options) => openSqlite(url, sqlitePath(url, rest), options),
  file: (url, rest, options) => openSqlite(url, rest.startsWith("/") ? filePath(url) : nonEmpty(url, rest), options),
  redis: openRedis,
  rediss: openRedis,
};

export interface OpenStoreOptions {
  /** The opener's settings (AFS_REDIS_PASSWORD for a Redis URL without one). */
  env?: Env;
  /**
   * Only open a store that is already there (a migration's source): a SQLite file that does not
   * exist is NOT_FOUND, where it would otherwise be created with its directories.
   */
  existing?: boolean;
}

/** The store `url` names, inside the contract's checks (checked-store.ts), as every caller gets it. */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  return checkedStore(await openDriver(url, options));
}

async function openDriver(url: string, options: OpenStoreOptions): Promise<StoreDriver> {
  if (url.trim() === "") throw invalid(url, "is empty");
  // A one-letter "scheme" is a Windows drive (C:\…), i.e. a bare path.
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]+):/.exec(url)?.[1];
  if (scheme === undefined) return openSqlite(url, url, options);
  const open = SCHEMES[scheme.toLowerCase()];
  if (!open) throw invalid(url, `has an unknown scheme ${JSON.stringify(`${scheme}:`)}`);
  return open(url, url.slice(scheme.length + 1), options);
}

async function openSqlite(url: string, path: string, options: OpenStoreOptions): Promise<StoreDriver> {
  if (options.existing && !existsSync(path)) {
    throw new AfsError("NOT_FOUND", `there is no store at ${maskStoreUrl(url)} (no file ${path}); check the path`, {
      url: maskStoreUrl(url),
    });
  }
  const { SqliteStore } = await import("./sqlite/store.js");
  return SqliteStore.open(path);
}

/** `sqlite:` takes a literal path; `sqlite:///abs` (empty or localhost authority) is accepted too. */
function sqlitePath(url: string, rest: string): string {
  if (!rest.startsWith("//")) return nonEmpty(url, rest);
  const slash = rest.indexOf("/", 2);
  const host = rest.slice(2, slash === -1 ? undefined : slash);
  if (host !== "" && host !== "localhost") {
    // The host without its userinfo: a password must not reach the message.
    throw invalid(url, `names a host (${host.slice(host.lastIndexOf("@") + 1)}); SQLite stores are local files`);
  }
  return nonEmpty(url, slash === -1 ? "" : rest.slice(slash));
}

function filePath(url: string): string {
  try {
    return fileURLToPath(url);
  } catch (e) {
    throw invalid(url, `is not a usable file URL (${e instanceof Error ? e.message : String(e)})`);
  }
}

function nonEmpty(url: string, path: string): string {
  if (path === "") throw invalid(url, "has no file path");
  return path;
}

async function openRedis(url: string, _rest: string, options: OpenStoreOptions): Promise<StoreDriver> {
  const { RedisStore } = await import("./redis/store.js");
  return RedisStore.open(url, { env: options.env ?? {} });
}
