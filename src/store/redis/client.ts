// How the Redis store sends commands: every failure becomes an AfsError naming the server, script
// calls go by SHA with a one-time load when the server does not know them yet, and only reads
// are retried after a dropped connection (a write that may have landed is never sent twice).
import { AfsError } from "../../core/errors.js";
import {
  COMMAND_TIMEOUT_MS,
  isConnectionError,
  type RedisClientSlice,
  type RedisTarget,
  type Reply,
  redisError,
  timeoutError,
} from "./connect.js";
import type { Script, ScriptSource } from "./scripts.js";

/** How long a read waits for the connection to come back before its one retry. */
const READ_RETRY_WAIT_MS = 1_000;

export class RedisLink {
  private closed = false;

  constructor(
    private readonly client: RedisClientSlice,
    readonly target: RedisTarget,
    private readonly timeoutMs = COMMAND_TIMEOUT_MS,
    /** Whether the server reads script flags (Redis ≥ 7); see Script. */
    readonly scriptFlags = true,
  ) {}

  /** A command that changes something: sent once, whatever happens. */
  async write(args: ReadonlyArray<string | Buffer>): Promise<Reply> {
    this.checkOpen();
    try {
      return await this.send(args);
    } catch (e) {
      throw redisError(e, this.target);
    }
  }

  /** A command that only reads: retried once if the connection dropped under it. */
  async read(args: ReadonlyArray<string | Buffer>): Promise<Reply> {
    this.checkOpen();
    try {
      return await this.send(args);
    } catch (e) {
      if (!isConnectionError(e)) throw redisError(e, this.target);
      await this.waitReady();
      try {
        return await this.send(args);
      } catch (again) {
        throw redisError(again, this.target);
      }
    }
  }

  /** Runs a script; `readOnly` scripts may be retried like reads. */
  async run(
    script: Script,
    keys: readonly string[],
    args: ReadonlyArray<string | Buffer>,
    readOnly = false,
  ): Promise<Reply> {
    const send = readOnly
      ? (a: ReadonlyArray<string | Buffer>) => this.read(a)
      : (a: ReadonlyArray<string | Buffer>) => this.write(a);
    const tail = [String(keys.length), ...keys, ...args];
    const { sha, source } = this.sourceOf(script);
    try {
      return await send(["EVALSHA", sha, ...tail]);
    } catch (e) {
      // NOSCRIPT means the script did not run, so sending its source now cannot apply it twice.
      if (!(e instanceof AfsError) || !/NOSCRIPT/.test(e.message)) throw e;
      return send(["EVAL", source, ...tail]);
    }
  }

  /** The script text this server runs. */
  sourceOf(script: Script): ScriptSource {
    return this.scriptFlags ? script.flagged : script.legacy;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.client.close();
    } catch {
      this.client.destroy();
    }
  }

  /**
   * node-redis times a command out only while it waits to be written; once sent, a stopped
   * server would keep the caller waiting forever, so the reply gets a deadline here.
   */
  private send(args: ReadonlyArray<string | Buffer>): Promise<Reply> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeoutError(this.target, this.timeoutMs)), this.timeoutMs);
    });
    return Promise.race([this.client.sendCommand<Reply>(args), deadline]).finally(() => clearTimeout(timer));
  }

  private checkOpen(): void {
    if (this.closed) throw new AfsError("IO_ERROR", `the store at ${this.target.shown} is closed`);
  }

  private async waitReady(): Promise<void> {
    const until = Date.now() + READ_RETRY_WAIT_MS;
    while (!this.client.isReady && this.client.isOpen && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

// --- reply helpers: the client returns bulk strings as Buffers ------------------------------------

export const str = (r: Reply): string | null =>
  r === null || r === undefined ? null : Buffer.isBuffer(r) ? r.toString("utf8") : String(r);
export const num = (r: Reply): number | null => {
  const s = str(r);
  return s === null ? null : Number(s);
};
export const arr = (r: Reply): Reply[] => (Array.isArray(r) ? r : []);
export const buf = (r: Reply): Buffer | null =>
  r === null || r === undefined ? null : Buffer.isBuffer(r) ? r : Buffer.from(String(r));

/** A flat field/value reply (HGETALL) as a map of strings. */
export function fields(r: Reply): Map<string, string> {
  const a = arr(r);
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < a.length; i += 2) out.set(str(a[i] ?? null) ?? "", str(a[i + 1] ?? null) ?? "");
  return out;
}

/**
 * Maps items through `fn` a batch at a time: node-redis pipelines each batch on one connection,
 * and memory stays bounded however many items a caller passes.
 */
export async function batched<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, size = 500): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}
