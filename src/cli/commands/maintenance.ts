// `afs gc`, `afs fsck`, `afs status`: store-wide housekeeping and a look at where things are.
import { type Command, InvalidArgumentError } from "commander";
import type { Io } from "../context.js";
import { ExitStatus } from "../errors.js";
import { bytes, type JsonFlag, plural } from "../output.js";
import { leaf } from "./leaf.js";

export function registerMaintenanceCommands(program: Command, io: Io): void {
  leaf(program, "gc", "delete stored content no checkpoint, live state or kept version uses")
    .option("--grace <seconds>", "keep objects younger than this (default: one hour)", parseSeconds)
    .option("--repack", "then re-encode content stored in an older format, so range reads inflate less")
    .action((flags: JsonFlag & { grace?: number; repack?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const graceMs = flags.grace === undefined ? undefined : flags.grace * 1000;
        const result = await afs.maintenance.gc({ graceMs, repack: flags.repack === true });
        io.emit(flags, result, (r) => {
          const lines = [
            `deleted ${plural(r.blobs_deleted, "blob")} and ${plural(r.trees_deleted, "tree")} (${bytes(r.bytes_freed)}); kept ${r.blobs_kept} blobs and ${r.trees_kept} trees; swept ${plural(r.chunks_deleted, "unused chunk")} (${bytes(r.chunk_bytes_freed)})`,
          ];
          const kept = Object.entries(r.versions_by_workspace).map(([ws, n]) => `${ws} ${n}`);
          lines.push(
            `kept ${plural(r.versions_kept, "old version")} (${bytes(r.version_bytes_kept)}) for history` +
              (kept.length > 0 ? ` (versions named per workspace's policy: ${kept.join(", ")})` : ""),
          );
          const p = r.index_pruned;
          if (p) {
            lines.push(
              `index: pruned ${plural(p.text_blobs, "content")} from grep's index, ${plural(p.query_blobs, "content")} (${plural(p.chunks, "chunk")}) and ${plural(p.vectors, "vector")} from the query index`,
            );
          }
          const q = r.repacked;
          if (q)
            lines.push(`repacked ${plural(q.values, "value")} (${bytes(q.bytes_before)} → ${bytes(q.bytes_after)})`);
          return lines;
        });
      }),
    );

  leaf(program, "fsck", "verify the store: every referenced object present and matching its hash").action(
    (flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const result = await afs.maintenance.fsck();
        io.emit(flags, result, (r) =>
          r.ok
            ? `ok: ${plural(r.trees_checked, "tree")} and ${plural(r.blobs_checked, "blob")} checked`
            : [...r.problems, `${plural(r.problems.length, "problem")} found`],
        );
        if (!result.ok) throw new ExitStatus(1);
      }),
  );

  leaf(program, "status", "version, data directory, store, current workspace and this machine's mounts").action(
    (flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        // Loaded here: gc and fsck need none of the mount code.
        const { describeMount, listMounts } = await import("../../mounts/live.js");
        const status = { ...(await afs.maintenance.status()), mounts: await listMounts(afs) };
        io.emit(flags, status, (s) => [
          `afs ${s.version}`,
          `home       ${s.home}`,
          `store      ${s.store}`,
          `workspace  ${s.current_workspace ?? "(none; choose one with: afs ws use NAME)"}`,
          `workspaces ${s.workspaces}`,
          `mounts     ${s.mounts.length === 0 ? "none (afs mount WORKSPACE DIR)" : s.mounts.length}`,
          ...s.mounts.map((m) => `  ${describeMount(m)}`),
        ]);
      }),
  );
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("expected a number of seconds (0 or more)");
  return n;
}
