// Where the resident afs listens and what it is asked: shared by the executable's loader (the
// client, which runs before any bundle loads) and the resident process itself.
import { lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Env } from "../../core/settings.js";
import { commandOf } from "../command-words.js";

/**
 * The commands a resident afs answers: reads whose cost is mostly warming up (opening the store,
 * the search index's lookups, compiled code), which a fresh process pays on every run. Anything
 * that writes, reads stdin or runs long stays in the process the user started.
 */
const RESIDENT_COMMANDS = new Set(["fs grep", "fs glob", "fs ls", "fs query"]);

/** `AFS_DAEMON=off`: never use or start a resident afs. */
export const residentDisabled = (env: Env): boolean => /^(off|0|false|no)$/i.test(env.AFS_DAEMON ?? "");

/** Whether this command line can be answered by the resident afs. */
export function forResident(argv: readonly string[]): boolean {
  const [command, sub] = commandOf(argv);
  const name = `${command} ${sub}`;
  if (!RESIDENT_COMMANDS.has(name)) return false;
  // Help is printed where it was asked (it fits the terminal); query's JSON arguments may be
  // `@FILE` or `@-`, read from the caller's files or stdin. (grep's `@` is just a character.)
  return !argv.some((a) => a === "-h" || a === "--help" || (name === "fs query" && a.startsWith("@")));
}

/** The build's identity, set by the executable's loader: a resident afs only answers its own build. */
const BUILD = Symbol.for("afs.build");

export function setBuild(id: string): void {
  (globalThis as Record<symbol, unknown>)[BUILD] = id;
}

const build = (): string => String((globalThis as Record<symbol, unknown>)[BUILD] ?? "dev").replace(/\.cjs$/, "");

/**
 * The directory of the user's resident sockets: $AFS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/afs, else
 * a per-user directory under the temporary directory. It must be the user's own and closed to
 * others (anyone who could place a socket there could answer the user's searches); undefined when
 * it is not, and the CLI then does its work itself.
 */
export function runtimeDir(env: Env): string | undefined {
  const dir =
    env.AFS_RUNTIME_DIR ||
    (env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "afs") : join(tmpdir(), `afs-${process.getuid?.() ?? "user"}`));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Linux's limit on a socket's path (sun_path), less its terminating NUL. */
const MAX_SOCKET_PATH = 107;

/** This build's socket, or undefined when there is no safe place for one (or its path is too long). */
export function socketPath(env: Env): string | undefined {
  const dir = runtimeDir(env);
  const path = dir === undefined ? undefined : join(dir, `${build()}.sock`);
  return path !== undefined && Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : undefined;
}

/** What a client sends: one JSON line. */
export type ResidentRequest =
  | { kind: "run"; argv: string[]; cwd: string; env: NodeJS.ProcessEnv }
  | { kind: "status" }
  | { kind: "stop" };

/**
 * The answer's frames: a kind byte, a 4-byte big-endian length, then that many bytes. Output
 * streams as it is written; the exit frame (the status as ASCII digits) ends the answer.
 */
export const FRAME = { stdout: 0x6f, stderr: 0x65, exit: 0x78 } as const;

export function frame(kind: number, data: string | Uint8Array): Buffer {
  const body = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const head = Buffer.allocUnsafe(5);
  head[0] = kind;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}
