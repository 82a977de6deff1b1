// How the workspaces and files pages show sizes and times: short for people, exact in a title.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1536 → "1.5 KiB". */
export function size(bytes: number): string {
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < UNITS.length - 1) {
    n /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n < 10 ? n.toFixed(1) : Math.round(n)} ${UNITS[unit]}`;
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** An ISO time as "3 minutes ago". */
export function ago(iso: string, now = Date.now()): string {
  let n = (Date.parse(iso) - now) / 1000;
  for (const [unit, per] of STEPS) {
    if (Math.abs(n) < per) return relative.format(Math.round(n), unit);
    n /= per;
  }
  return iso;
}

/** An ISO time in the reader's own zone, for titles. */
export const exact = (iso: string): string => new Date(iso).toLocaleString();
