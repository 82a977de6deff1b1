// Spawning and talking to worker processes: each worker is a separate Node process running
// test/process/worker.ts under tsx, speaking one JSON message per line on stdin and stdout.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const WORKER = join(REPO, "test/process/worker.ts");
export const CLI = join(REPO, "dist/cli/main.js");

/** Every message a worker prints carries a type tag `t`; the rest depends on the mode. */
export interface Message {
  t: string;
  [key: string]: unknown;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class Worker {
  readonly messages: Message[] = [];
  readonly exited: Promise<Exit>;
  private stderr = "";
  private readonly listeners = new Set<(m: Message) => void>();
  private exit: Exit | null = null;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-20_000);
    });
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on("line", (line) => {
      if (line.trim() === "") return;
      let m: Message;
      try {
        m = JSON.parse(line) as Message;
      } catch {
        m = { t: "garbage", line };
      }
      this.messages.push(m);
      for (const fn of [...this.listeners]) fn(m);
    });
    // Close fires after stdout is fully drained, so every line printed before exit is seen.
    this.exited = new Promise((done) =>
      child.on("close", (code, signal) => {
        this.exit = { code, signal };
        done(this.exit);
      }),
    );
  }

  static spawn(name: string, mode: string, args: object, env: NodeJS.ProcessEnv = {}): Worker {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER, mode, JSON.stringify(args)], {
      cwd: REPO,
      env: cleanEnv(env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new Worker(name, child);
  }

  get errors(): string {
    return this.stderr;
  }

  get running(): boolean {
    return this.exit === null;
  }

  send(message: object): void {
    this.child.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** Calls `fn` for every message from now on; returns a function that stops listening. */
  onMessage(fn: (m: Message) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The first message (already received or future) matching `pred`; rejects on exit or timeout. */
  waitFor(pred: (m: Message) => boolean, timeoutMs: number, what = "message"): Promise<Message> {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolvePromise, reject) => {
      const stop = (): void => {
        clearTimeout(timer);
        off();
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`${this.name}: no ${what} within ${timeoutMs} ms\n${this.describe()}`));
      }, timeoutMs);
      const off = this.onMessage((m) => {
        if (m.t === "error") {
          stop();
          reject(new Error(`${this.name} failed: ${JSON.stringify(m)}\n${this.describe()}`));
        } else if (pred(m)) {
          stop();
          resolvePromise(m);
        }
      });
      void this.exited.then((exit) => {
        if (this.messages.find(pred)) return;
        stop();
        reject(new Error(`${this.name} exited (${JSON.stringify(exit)}) before ${what}\n${this.describe()}`));
      });
    });
  }

  /** Kills the process if it still runs (used by cleanup, never to end a healthy worker). */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  describe(): string {
    const errors = this.stderr.trim();
    return errors ? `--- ${this.name} stderr ---\n${errors}` : `(${this.name}: no stderr)`;
  }
}

/** Ends a worker expected to finish by itself: waits for a clean exit, else kills it and fails. */
export async function finish(worker: Worker, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((done) => {
    timer = setTimeout(() => done("timeout"), timeoutMs);
  });
  const exit = await Promise.race([worker.exited, timeout]);
  clearTimeout(timer);
  if (exit === "timeout") {
    await worker.kill();
    throw new Error(`${worker.name} did not exit within ${timeoutMs} ms\n${worker.describe()}`);
  }
  if (exit.code !== 0) throw new Error(`${worker.name} exited with ${JSON.stringify(exit)}\n${worker.describe()}`);
}

/** Runs `node dist/cli/main.js fsck` on a home; null when the CLI has not been built. */
export function cliFsck(home: string, timeoutMs = 30_000): Promise<{ code: number | null; output: string } | null> {
  if (!existsSync(CLI)) return Promise.resolve(null);
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, "fsck"], {
      cwd: REPO,
      env: cleanEnv({ AFS_HOME: home }),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      output += c.toString();
    });
    child.on("close", (code) => done({ code, output }));
  });
}

/** The parent's environment without settings that would point a child at another store. */
function cleanEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { AFS_STORE: _store, AFS_WORKSPACE: _ws, AFS_HOME: _home, ...rest } = process.env;
  return { ...rest, ...extra };
}

/** A start time a little in the future that every worker waits for, so they begin together. */
export const startAt = (delayMs = 30): number => Date.now() + delayMs;
