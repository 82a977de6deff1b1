// Printing results: `--json` prints the operation's result object as it is; otherwise a short
// human rendering (tables for lists, plain text for content). Data goes to stdout only.
import type { Invocation } from "./invocation.js";

export { drained } from "./invocation.js";

export interface JsonFlag {
  json?: boolean;
}

/** One command's output: to its invocation's stdout and stderr, times in its caller's time zone. */
export class Output {
  /** Worked out on the first time printed: most commands print none. */
  private timeZone: { name: string | undefined } | undefined;

  constructor(private readonly to: Pick<Invocation, "stdout" | "stderr" | "env">) {}

  /** Data: to stdout. */
  readonly write = (data: string | Uint8Array): void => void this.to.stdout.write(data);

  /** Data streamed to stdout piece by piece: each waits for the reader, so memory stays one piece. */
  readonly writePiece = async (data: string | Uint8Array): Promise<void> => {
    if (!this.to.stdout.write(data)) await this.to.stdout.drain();
  };

  /** Notes and errors: to stderr, so stdout stays the results. */
  readonly warn = (text: string): void => void this.to.stderr.write(text);

  /** Writes each line followed by a newline; nothing for an empty list. */
  readonly writeLines = (lines: readonly string[]): void => {
    if (lines.length > 0) this.write(`${lines.join("\n")}\n`);
  };

  /** Prints `value` as JSON with --json, else whatever `human` renders (lines). */
  emit<T>(flags: JsonFlag, value: T, human: (value: T) => string | readonly string[]): void {
    if (flags.json) {
      this.write(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const text = human(value);
    if (typeof text === "string") this.writeLines(text === "" ? [] : [text]);
    else this.writeLines(text);
  }

  /** A short time for tables in the caller's time zone: "2025-01-31 14:05". */
  readonly time = (iso: string): string => {
    this.timeZone ??= { name: zoneOf(this.to.env.TZ) };
    return shortTime(iso, this.timeZone.name);
  };
}

/**
 * The IANA zone a TZ value names, for Intl; undefined (this process's local time) when TZ is unset
 * or names nothing Intl knows (then Node's own reading of TZ is the best there is).
 */
function zoneOf(tz: string | undefined): string | undefined {
  const name = tz?.replace(/^:/, "");
  if (!name) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
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

/** A short time for tables, "2025-01-31 14:05": local, or in `timeZone` (an IANA name). */
export function shortTime(iso: string, timeZone?: string): string {
  const d = new Date(iso);
  const pad = (n: number): string => String(n).padStart(2, "0");
  if (timeZone === undefined) {
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).formatToParts(d);
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}`;
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
