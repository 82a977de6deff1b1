// Printing results: `--json` prints the operation's result object as it is; otherwise a short
// human rendering (tables for lists, plain text for content). Data goes to stdout only.

export interface JsonFlag {
  json?: boolean;
}

/** Where a command's output goes: this process's stdout and stderr, or, in the resident afs, a client's. */
export interface Sink {
  /** False when the reader is behind: wait for drain() before writing more. */
  out(data: string | Uint8Array): boolean;
  drain(): Promise<void>;
  err(text: string): void;
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

const processSink: Sink = {
  out: (data) => process.stdout.write(data),
  drain: () => drained(process.stdout),
  err: (text) => void process.stderr.write(text),
};

// One variable, not async-local storage: the resident afs runs one command at a time.
let sink = processSink;

/** Runs a command with its output going to `to` (the resident afs's client) instead of this process's. */
export async function withSink<T>(to: Sink, fn: () => Promise<T>): Promise<T> {
  const before = sink;
  sink = to;
  try {
    return await fn();
  } finally {
    sink = before;
  }
}

/** Data: to stdout. */
export const write = (data: string | Uint8Array): void => void sink.out(data);

/** Data streamed to stdout piece by piece: each waits for the reader, so memory stays one piece. */
export async function writePiece(data: string | Uint8Array): Promise<void> {
  if (!sink.out(data)) await sink.drain();
}

/** Notes and errors: to stderr, so stdout stays the results. */
export const warn = (text: string): void => sink.err(text);

/** Writes each line followed by a newline; nothing for an empty list. */
export const writeLines = (lines: readonly string[]): void => {
  if (lines.length > 0) write(`${lines.join("\n")}\n`);
};

/** Prints `value` as JSON with --json, else whatever `human` renders (lines). */
export function emit<T>(flags: JsonFlag, value: T, human: (value: T) => string | readonly string[]): void {
  if (flags.json) {
    write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const text = human(value);
  if (typeof text === "string") writeLines(text === "" ? [] : [text]);
  else writeLines(text);
}

/** Left-aligned columns separated by two spaces, with a header row. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  if (rows.length === 0) return [];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** A short local time for tables: "2025-01-31 14:05". */
export function shortTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function bytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

export const plural = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;
