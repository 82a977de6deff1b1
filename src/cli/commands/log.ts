// `afs log`: the activity log of one workspace or all, one line per change (time, actor, surface,
// op, path, size change), checkpoints and restores included; `--follow` keeps printing changes
// as any process or machine sharing the store makes them.
import { type Command, InvalidArgumentError } from "commander";
import type { Hash } from "../../core/hash.js";
import { isWithin, normalizePath } from "../../core/paths.js";
import type { Afs, EventFilter, EventRecord } from "../../workspace/afs.js";
import { globals, type Io } from "../context.js";
import { bytes, type JsonFlag, table } from "../output.js";
import { parseCount } from "./fs-history.js";
import { leaf } from "./leaf.js";

interface LogFlags extends JsonFlag {
  follow?: boolean;
  path?: string;
  actor?: string;
  since?: number;
  limit?: number;
}

/** Operations whose hashes are root trees, not file contents (no size change to show). */
const TREE_OPS = new Set(["checkpoint", "restore"]);
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "30m", "2h", "7d" ago, or an ISO date or time. */
export function parseSince(value: string, now = Date.now()): number {
  const rel = /^(\d+)([smhdw])$/.exec(value);
  if (rel) return now - Number(rel[1]) * (UNITS[rel[2] as string] as number);
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new InvalidArgumentError("expected a time (2025-01-31, 2025-01-31T14:05) or an age (30m, 2h, 7d)");
  return t;
}

/** One entry as printed: the event with its time as ISO and the file's size before and after. */
export interface LogEntry extends Omit<EventRecord, "time"> {
  time: string;
  size_before: number | null;
  size_after: number | null;
}

/** The newest `limit` changes of these workspaces passing `filter`, in time order: what `afs log` prints. */
export async function recentChanges(
  afs: Afs,
  names: readonly string[],
  filter: EventFilter,
  limit: number,
): Promise<EventRecord[]> {
  return afs.events.recentAcross(names, { ...filter, limit });
}

/** Events as `afs log` shows them: ISO times and the content sizes before and after. */
export async function logEntries(afs: Afs, events: readonly EventRecord[]): Promise<LogEntry[]> {
  const sizes = new Map<Hash, number | null>();
  const wanted = new Set<Hash>();
  for (const e of events) {
    if (TREE_OPS.has(e.op)) continue;
    if (e.oldHash) wanted.add(e.oldHash);
    if (e.newHash) wanted.add(e.newHash);
  }
  await Promise.all([...wanted].map(async (h) => sizes.set(h, await afs.history.contentSize(h))));
  const size = (e: EventRecord, h: Hash | null): number | null =>
    h === null ? (TREE_OPS.has(e.op) ? null : 0) : (sizes.get(h) ?? null);
  return events.map((e) => ({
    ...e,
    time: new Date(e.time).toISOString(),
    size_before: size(e, e.oldHash),
    size_after: size(e, e.newHash),
  }));
}

function sizeChange(e: LogEntry): string {
  if (TREE_OPS.has(e.op)) return "";
  if (e.size_after === null || e.size_before === null) return e.size_after === null ? "?" : bytes(e.size_after);
  const d = e.size_after - e.size_before;
  if (e.oldHash === null) return `+${bytes(e.size_after)}`;
  if (e.newHash === null) return `-${bytes(e.size_before)}`;
  return d === 0 ? "±0" : d > 0 ? `+${bytes(d)}` : `-${bytes(-d)}`;
}

export function registerLog(program: Command, io: Io): void {
  leaf(program, "log", "the activity log: one line per change (of one workspace with -w, else of all)")
    .option("-w, --workspace <name>", "only this workspace (default: every workspace)")
    .option("--follow", "keep printing changes as they happen, from any process or machine, until interrupted")
    .option("--path <path>", "only this path and what is below it")
    .option("--actor <name>", "only changes by this actor")
    .option("--since <time>", "only changes since this time or age (2025-01-31, 30m, 2h, 7d)", (v) => parseSince(v))
    .option("--limit <n>", "the newest this many changes (default 50)", parseCount)
    .action((flags: LogFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const filter: EventFilter = {};
        if (flags.path !== undefined) filter.path = flags.path;
        if (flags.actor !== undefined) filter.actor = flags.actor;
        if (flags.since !== undefined) filter.since = flags.since;
        const named = globals(cmd).workspace;
        const names = named !== undefined ? [named] : (await afs.workspaces.list()).map((w) => w.name);
        const limit = flags.limit ?? 50;
        // Where each log stood before it was read: following starts there, skipping what was printed.
        const printed = new Map<string, number>();
        if (flags.follow) for (const ws of names) printed.set(ws, (await afs.workspaces.get(ws)).revision);
        const merged = await recentChanges(afs, names, filter, limit);
        const many = names.length > 1 || named === undefined;
        const print = async (events: readonly EventRecord[], streaming: boolean): Promise<void> => {
          const list = await logEntries(afs, events);
          if (flags.json) {
            if (streaming) io.writeLines(list.map((e) => JSON.stringify(e)));
            else io.emit(flags, list, () => []);
            return;
          }
          const rows = list.map((e) => [
            io.time(e.time),
            ...(many ? [e.workspace] : []),
            e.actor,
            e.surface,
            e.op,
            e.path,
            sizeChange(e),
          ]);
          if (streaming) {
            io.writeLines(rows.map((r) => r.join("  ")));
            return;
          }
          if (rows.length === 0) return io.writeLines(["no changes recorded yet"]);
          io.writeLines(
            table(["TIME", ...(many ? ["WORKSPACE"] : []), "ACTOR", "SURFACE", "OP", "PATH", "SIZE"], rows),
          );
        };
        if (!flags.follow) return print(merged, false);
        // Following: JSON lines (one entry a line) rather than one array that never ends.
        await print(merged, true);
        for (const e of merged) printed.set(e.workspace, Math.max(printed.get(e.workspace) ?? 0, e.seq));
        const under = filter.path === undefined ? undefined : normalizePath(filter.path);
        const keep = (e: EventRecord): boolean =>
          e.seq > (printed.get(e.workspace) ?? 0) &&
          (under === undefined || isWithin(e.path, under)) &&
          (filter.actor === undefined || e.actor === filter.actor);
        const printNew = (events: EventRecord[]) => print(events.filter(keep), true);
        // Until interrupted: the signal closes the engine (and its followers) and ends the process;
        // the timer keeps the process alive (followers unref theirs). Without -w, workspaces
        // created since are followed too, from their first event.
        const from = Object.fromEntries(printed);
        if (named === undefined) afs.events.followEvery(printNew, { from });
        else for (const ws of names) afs.events.follow(ws, printed.get(ws) ?? 0, printNew);
        await new Promise<never>(() => setInterval(() => undefined, 60_000));
      }),
    );
}
