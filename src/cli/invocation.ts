// One run of the command line as a value: its arguments, directory, environment and streams. The
// executable builds it from its own process (main.ts); the resident afs builds one per client, so
// commands never read process.argv, process.env or process.cwd() and several can run at once.
import type { Env } from "../core/settings.js";

/** Where a command's output goes: this process's stdout or stderr, or a resident afs client's. */
export interface Sink {
  /** False when the reader is behind: wait for drain() before writing more. */
  write(data: string | Uint8Array): boolean;
  drain(): Promise<void>;
  /** The terminal this sink writes to, when it is one (progress bars are drawn on it). */
  readonly terminal?: NodeJS.WriteStream;
}

export interface Invocation {
  /** The arguments after `afs`. */
  readonly argv: readonly string[];
  /** The caller's directory: relative paths the user typed are taken from here. */
  readonly cwd: string;
  /** The caller's environment: AFS_* settings, TZ, … */
  readonly env: Env;
  /** What the command reads content from (`fs write` without --content, `@-`). */
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly stdout: Sink;
  readonly stderr: Sink;
}

/** Resolves when `stream` drains, or closes (a reader that stopped early: nothing more will be read). */
export function drained(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off("drain", done).off("close", done);
      resolve();
    };
    stream.on("drain", done).on("close", done);
  });
}

/** A Node stream (this process's stdout or stderr) as a Sink. */
export function streamSink(stream: NodeJS.WriteStream): Sink {
  return {
    write: (data) => stream.write(data),
    drain: () => drained(stream),
    ...(stream.isTTY ? { terminal: stream } : {}),
  };
}
