// The settings afs takes from its environment (AFS_*, and the few others it reads), read once into
// one object when an engine opens; everything below the edge reads them from there, never from
// process.env. Pure: the caller says which environment (a process's, a resident client's, a test's).
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** An environment: variable name → value (process.env has this shape). */
export type Env = Readonly<Record<string, string | undefined>>;

export interface Settings {
  /** AFS_HOME as given (relative to the caller's directory), else undefined: <HOME>/.afs. */
  readonly home: string | undefined;
  /** HOME: where the default home (~/.afs) lies; undefined means the account's home directory. */
  readonly userHome: string | undefined;
  /** AFS_STORE: the store URL; undefined means sqlite:<home>/afs.db. */
  readonly store: string | undefined;
  /** AFS_ACTOR: recorded on events and checkpoints; undefined means the OS user. */
  readonly actor: string | undefined;
  /** AFS_WORKSPACE: the workspace acted on when none is named; undefined means the current one. */
  readonly workspace: string | undefined;
  /** AFS_DEBUG=1: errors also print their stack and details. */
  readonly debug: boolean;
  /** AFS_TEXT_CACHE_MB, in bytes: grep's in-memory text budget. */
  readonly textCacheBytes: number;
  /**
   * Every variable an engine reads (AFS_*, HOME, USER, OPENAI_API_KEY), as they were when read:
   * what the settings validated where they are used come from (AFS_MAX_* limits, AFS_EMBED_*,
   * AFS_MAX_FILE_BYTES, AFS_REDIS_PASSWORD), so a malformed one fails only the command that uses it.
   */
  readonly env: Env;
}

/**
 * Besides AFS_*, the variables an engine reads. (The CLI's loader and its resident afs's socket read
 * XDG_CACHE_HOME and XDG_RUNTIME_DIR themselves, at the edge; no engine needs them.)
 */
const OTHERS = new Set(["HOME", "USER", "OPENAI_API_KEY"]);
const read = (name: string): boolean => name.startsWith("AFS_") || OTHERS.has(name);

/**
 * Default budget in bytes of text: a warm search reads its candidates from memory, as rg reads them
 * from the page cache; a tree with more text than this reads the rest from the store on each search.
 */
export const DEFAULT_TEXT_CACHE_BYTES = 256 * 1024 * 1024;

/**
 * Variables naming a directory besides AFS_HOME and AFS_STORE (which locate() resolves): a relative
 * one is the caller's, so it is made absolute from the caller's directory when that is known.
 */
const PATH_VARIABLES = ["AFS_EMBED_MODEL_DIR"];

/** The settings in `env`; with `cwd`, relative paths in them are taken from that directory. */
export function readSettings(env: Env, cwd?: string): Settings {
  const own: Record<string, string> = {};
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value !== undefined && read(name)) own[name] = value;
  }
  for (const name of PATH_VARIABLES) {
    const value = own[name];
    if (cwd !== undefined && value !== undefined && value !== "" && !isAbsolute(value)) own[name] = resolve(cwd, value);
  }
  const mb = Number(own.AFS_TEXT_CACHE_MB);
  return {
    home: own.AFS_HOME,
    userHome: own.HOME,
    store: own.AFS_STORE,
    actor: own.AFS_ACTOR,
    workspace: own.AFS_WORKSPACE,
    debug: own.AFS_DEBUG === "1",
    textCacheBytes:
      own.AFS_TEXT_CACHE_MB !== undefined && Number.isFinite(mb) && mb >= 0
        ? Math.floor(mb * 1024 * 1024)
        : DEFAULT_TEXT_CACHE_BYTES,
    env: own,
  };
}

/** The data directory: `given` (--home), else AFS_HOME, else <HOME>/.afs; relative ones from `cwd`. */
export function homeOf(settings: Settings, cwd: string, accountHome: () => string, given?: string): string {
  return resolve(cwd, given ?? settings.home ?? join(settings.userHome ?? accountHome(), ".afs"));
}

/**
 * A store URL whose SQLite file is named by a relative path (`sqlite:rel.db`, `file:rel.db`, a bare
 * path), made absolute from `cwd`: the file is the one in the caller's directory, wherever the
 * engine runs. Any other URL is returned as it is.
 */
export function storeUrlFrom(url: string, cwd: string): string {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]+):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) return url.trim() === "" || isAbsolute(url) ? url : resolve(cwd, url);
  if (scheme !== "sqlite" && scheme !== "file") return url;
  const rest = url.slice(scheme.length + 1);
  if (rest === "" || rest.startsWith("/")) return url;
  return scheme === "file"
    ? pathToFileURL(resolve(cwd, rest)).href
    : `${url.slice(0, scheme.length + 1)}${resolve(cwd, rest)}`;
}
