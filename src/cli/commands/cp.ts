// `afs cp …`: checkpoints of the current (or -w) workspace: create, list, show, diff, restore, delete.
import type { Command } from "commander";
import type { DiffResult } from "../../workspace/afs.js";
import type { Change } from "../../workspace/diff.js";
import type { CheckpointInfo } from "../../workspace/info.js";
import { type Io, workspaceOption } from "../context.js";
import { type JsonFlag, table } from "../output.js";
import { leaf } from "./leaf.js";

const describe = (cp: CheckpointInfo): string[] => [
  `checkpoint  ${cp.name}`,
  `kind        ${cp.kind}`,
  ...(cp.description ? [`description ${cp.description}`] : []),
  `created     ${cp.created_at} by ${cp.actor}`,
  `id          ${cp.id}`,
  `parent      ${cp.parent ?? "-"}`,
  `root        ${cp.root}`,
];

const STATUS_LETTER: Readonly<Record<Change["status"], string>> = {
  added: "A",
  modified: "M",
  deleted: "D",
  renamed: "R",
};

function renderDiff(d: DiffResult, stat: boolean): string[] {
  const { added, modified, deleted, renamed } = d.summary;
  const lines = d.changes.map((c) => {
    const where = c.old_path ? `${c.old_path} -> ${c.path}` : c.path;
    const note = c.binary ? " (binary)" : c.kind === "file" ? "" : ` (${c.kind})`;
    return `${STATUS_LETTER[c.status]} ${where}${note}`;
  });
  lines.push(`${d.base}..${d.target}: ${added} added, ${modified} modified, ${deleted} deleted, ${renamed} renamed`);
  if (stat) return lines;
  for (const c of d.changes) if (c.patch) lines.push("", c.patch.trimEnd());
  return lines;
}

const withoutPatches = (d: DiffResult): DiffResult => ({
  ...d,
  changes: d.changes.map(({ patch: _, ...rest }) => rest),
});

export function registerCheckpointCommands(program: Command, io: Io): void {
  const cp = program.command("cp").description("checkpoints: named, immutable snapshots of a workspace");
  const scoped = (spec: string, description: string): Command => workspaceOption(leaf(cp, spec, description));

  scoped("create [name]", "checkpoint the live state (a clean workspace keeps its head)")
    .option("--description <text>", "what this checkpoint captures")
    .action((name: string | undefined, flags: JsonFlag & { description?: string }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, ws) => {
        const result = await afs.checkpoints.create(ws, { name, description: flags.description });
        io.emit(flags, result, (r) =>
          r.created
            ? `created checkpoint ${r.checkpoint.name} in ${ws}`
            : `nothing to checkpoint: ${ws} has no live changes (head is ${r.checkpoint.name})`,
        );
      }),
    );

  scoped("list", "list checkpoints, newest first (* marks head)").action((flags: JsonFlag, cmd: Command) =>
    io.withWorkspace(cmd, async (afs, ws) => {
      const [list, info] = await Promise.all([afs.checkpoints.list(ws), afs.workspaces.get(ws)]);
      io.emit(flags, list, (l) =>
        table(
          ["", "NAME", "KIND", "CREATED", "ACTOR", "DESCRIPTION"],
          l.map((c) => [
            c.name === info.head ? "*" : "",
            c.name,
            c.kind,
            io.time(c.created_at),
            c.actor,
            c.description,
          ]),
        ),
      );
    }),
  );

  scoped("show <name>", "show one checkpoint").action((name: string, flags: JsonFlag, cmd: Command) =>
    io.withWorkspace(cmd, async (afs, ws) => io.emit(flags, await afs.checkpoints.get(ws, name), describe)),
  );

  scoped("diff <base> [target]", "changes from checkpoint BASE to TARGET (default: the live state)")
    .option("--stat", "only the list of changed paths and the summary")
    .action((base: string, target: string | undefined, flags: JsonFlag & { stat?: boolean }, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, ws) => {
        const d = await afs.checkpoints.diff(ws, base, target);
        io.emit(flags, flags.stat ? withoutPatches(d) : d, (r) => renderDiff(r, flags.stat === true));
      }),
    );

  scoped("restore <name>", "make a checkpoint the live state (live changes are saved first)").action(
    (name: string, flags: JsonFlag, cmd: Command) =>
      io.withWorkspace(cmd, async (afs, ws) => {
        const result = await afs.checkpoints.restore(ws, name);
        io.emit(flags, result, (r) =>
          r.safety
            ? `restored ${ws} to ${r.checkpoint.name}; the live changes were saved as checkpoint ${r.safety.name}`
            : `restored ${ws} to ${r.checkpoint.name}`,
        );
      }),
  );

  scoped("delete <name>", "delete a checkpoint (not the head)").action((name: string, flags: JsonFlag, cmd: Command) =>
    io.withWorkspace(cmd, async (afs, ws) => {
      await afs.checkpoints.delete(ws, name);
      io.emit(flags, { workspace: ws, deleted: name }, () => `deleted checkpoint ${name} from ${ws}`);
    }),
  );
}
