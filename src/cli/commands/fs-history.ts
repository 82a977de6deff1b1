// `afs fs history | diff | restore | undelete`: a file's versions from the event log, compared,
// brought back (a file or a subtree, as one change) and undeleted, through afs.history.
import { type Command, InvalidArgumentError } from "commander";
import type { FileVersion, RestoreResult } from "../../workspace/afs.js";
import { type Io, workspaceOption } from "../context.js";
import { bytes, type JsonFlag, table } from "../output.js";
import { leaf } from "./leaf.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number of at least 1");
  return n;
}

/** A version as `--json` prints it: times as ISO strings. */
const versionJson = (v: FileVersion) => ({ ...v, time: iso(v.time) });

const restored = (verb: string, r: RestoreResult): string =>
  `${verb} ${r.path}${r.kind === "dir" ? "/" : ""} from ${r.from} (revision ${r.revision})`;

export function registerHistory(fs: Command, io: Io): void {
  workspaceOption(
    leaf(fs, "history", "a file's versions, newest first: who changed it, how, and which checkpoints hold each"),
  )
    .argument("<path>", "the file (renames are followed back)")
    .option("--limit <n>", "at most this many versions (default 20)", parseCount)
    .option("--cursor <cursor>", "continue from the next value a previous --json page gave")
    .action((path: string, flags: JsonFlag & { limit?: number; cursor?: string }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, workspace) => {
        const options: { limit?: number; cursor?: string } = {};
        if (flags.limit !== undefined) options.limit = flags.limit;
        if (flags.cursor !== undefined) options.cursor = flags.cursor;
        const page = await afs.history.versions(workspace, path, options);
        io.emit(flags, { ...page, versions: page.versions.map(versionJson) }, () => {
          if (page.versions.length === 0) return `${path} has no recorded history in workspace ${workspace}`;
          const rows = page.versions.map((v) => [
            v.id ?? "-",
            v.time === null ? "-" : io.time(iso(v.time) as string),
            v.actor ?? "-",
            v.surface ?? "-",
            v.op === "base" ? "(before)" : v.op,
            v.sha256 === null ? "deleted" : v.size === null ? "gone" : bytes(v.size),
            v.checkpoints.join(",") || "-",
            v.path,
          ]);
          const lines = table(["VERSION", "TIME", "ACTOR", "SURFACE", "OP", "SIZE", "CHECKPOINTS", "PATH"], rows);
          if (page.next) lines.push(`(older versions: afs fs history ${path} --cursor '${page.next}')`);
          return lines;
        });
      }),
    );
}

export function registerDiff(fs: Command, io: Io): void {
  workspaceOption(leaf(fs, "diff", "a unified diff of a file between versions (default: to the live file)"))
    .argument("<path>", "the file")
    .requiredOption("--from <version>", "a version id (afs fs history) or a checkpoint name")
    .option("--to <version>", "a version id or checkpoint (default: the live file)")
    .action((path: string, flags: JsonFlag & { from: string; to?: string }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, workspace) => {
        const diff = await afs.history.diff(workspace, path, flags.from, flags.to);
        if (flags.json) return io.emit(flags, diff, () => []);
        if (diff.binary) io.write(`binary contents differ: ${diff.path} (${diff.from} → ${diff.to})\n`);
        else io.write(diff.patch);
      }),
    );
}

export function registerRestore(fs: Command, io: Io): void {
  workspaceOption(
    leaf(fs, "restore", "bring back a file's version, or a directory as a checkpoint holds it, as one change"),
  )
    .argument("<path>", "the file or directory")
    .requiredOption("--from <version>", "a version id (afs fs history) or a checkpoint name")
    .action((path: string, flags: JsonFlag & { from: string }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, workspace) => {
        const r = await afs.history.restore(workspace, path, flags.from);
        io.emit(flags, r, (x) => restored("restored", x));
      }),
    );
}

export function registerUndelete(fs: Command, io: Io): void {
  workspaceOption(leaf(fs, "undelete", "bring back a deleted file's last version (a directory from a checkpoint)"))
    .argument("<path>", "the deleted file or directory")
    .action((path: string, flags: JsonFlag, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, workspace) => {
        const r = await afs.history.undelete(workspace, path);
        io.emit(flags, r, (x) => restored("undeleted", x));
      }),
    );
}
