// `afs ws …`: create, list, show, choose, fork, delete, import and export workspaces.
import { type Command, InvalidArgumentError } from "commander";
import { AfsError } from "../../core/errors.js";
import type { WorkspaceInfo } from "../../workspace/info.js";
import type { Io } from "../context.js";
import { startBuilderAfter } from "../index-builder.js";
import { bytes, type JsonFlag, plural, table } from "../output.js";
import { progressBar } from "../progress.js";
import { leaf } from "./leaf.js";

interface DescriptionFlags extends JsonFlag {
  description?: string;
}

const describe = (ws: WorkspaceInfo): string[] => [
  `workspace   ${ws.name}`,
  `id          ${ws.id}`,
  ...(ws.description ? [`description ${ws.description}`] : []),
  ...(ws.template ? [`template    ${ws.template} (afs ws create NAME --template ${ws.template})`] : []),
  `head        ${ws.head}${ws.dirty ? " (live changes not checkpointed)" : ""}`,
  `revision    ${ws.revision}`,
  `created     ${ws.created_at}`,
  `updated     ${ws.updated_at}`,
];

export function registerWorkspaceCommands(program: Command, io: Io): void {
  const ws = program.command("ws").description("manage workspaces");

  leaf(ws, "create <name>", "create an empty workspace, or one from a template")
    .option("--description <text>", "what the workspace is for")
    .option("--template <slug>", "start from what this template holds now, like a fork (see afs ws list)")
    .action((name: string, flags: DescriptionFlags & { template?: string }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const info = await afs.workspaces.create(name, { description: flags.description, template: flags.template });
        io.emit(flags, info, (w) =>
          flags.template
            ? `created workspace ${w.name} from template ${flags.template}`
            : `created workspace ${w.name}`,
        );
      }),
    );

  leaf(ws, "template <name> [slug]", "offer a workspace as a template under a slug (default: its name)")
    .option("--unset", "withdraw the workspace as a template")
    .action((name: string, slug: string | undefined, flags: JsonFlag & { unset?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        if (flags.unset && slug !== undefined)
          throw new AfsError("INVALID_ARGUMENT", "give a slug or --unset, not both");
        const info = await afs.workspaces.setTemplate(name, flags.unset ? null : (slug ?? name));
        io.emit(flags, info, (w) =>
          w.template
            ? `workspace ${w.name} is template ${w.template}; start from it with: afs ws create NAME --template ${w.template}`
            : `workspace ${w.name} is no longer a template`,
        );
      }),
    );

  leaf(ws, "versioning <name>", "show or set how long old versions of files stay readable (gc keeps them)")
    .option(
      "--keep-days <days>",
      "keep every version from the last this many days (default 7; 0: none by age)",
      wholeNumber,
    )
    .option("--keep-versions <n>", "also keep the newest this many versions of each file, however old", wholeNumber)
    .option("--off", "keep no old versions: only checkpoints and the live state hold content")
    .action(
      (name: string, flags: JsonFlag & { keepDays?: number; keepVersions?: number; off?: boolean }, cmd: Command) =>
        io.withAfs(cmd, async (afs) => {
          if (flags.off && (flags.keepDays !== undefined || flags.keepVersions !== undefined)) {
            throw new AfsError(
              "INVALID_ARGUMENT",
              "give --off, or --keep-days/--keep-versions to turn versioning on, not both",
            );
          }
          const change = { keepDays: flags.keepDays, keepVersions: flags.keepVersions, off: flags.off || undefined };
          const asked = Object.values(change).some((v) => v !== undefined);
          const policy = asked ? await afs.history.setPolicy(name, change) : await afs.history.policy(name);
          io.emit(flags, { workspace: name, ...policy }, (p) =>
            !p.enabled
              ? `workspace ${name}: versioning off (gc keeps only what checkpoints and the live state hold)`
              : `workspace ${name}: old versions kept ${
                  [
                    ...(p.keepDays > 0 ? [`${plural(p.keepDays, "day")}`] : []),
                    ...(p.keepVersions > 0 ? [`the newest ${p.keepVersions} of each file`] : []),
                  ].join(" and ") || "not at all (keep-days 0)"
                }`,
          );
        }),
    );

  leaf(ws, "list", "list workspaces (* marks the current one)").action((flags: JsonFlag, cmd: Command) =>
    io.withAfs(cmd, async (afs) => {
      const [all, current] = await Promise.all([afs.workspaces.list(), afs.workspaces.current()]);
      io.emit(flags, all, (list) =>
        list.length === 0
          ? "no workspaces yet; create one with: afs ws create NAME"
          : table(
              ["", "NAME", "HEAD", "LIVE", "UPDATED", "TEMPLATE", "DESCRIPTION"],
              list.map((w) => [
                w.name === current ? "*" : "",
                w.name,
                w.head,
                w.dirty ? "changed" : "clean",
                io.time(w.updated_at),
                w.template ?? "-",
                w.description,
              ]),
            ),
      );
    }),
  );

  leaf(ws, "show [name]", "show a workspace (default: the current one)").action(
    (name: string | undefined, flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const info = await afs.workspaces.get(await afs.workspaces.resolve(name ?? io.workspace(cmd)));
        io.emit(flags, info, describe);
      }),
  );

  leaf(ws, "use <name>", "make a workspace the current one").action((name: string, flags: JsonFlag, cmd: Command) =>
    io.withAfs(cmd, async (afs) => {
      io.emit(flags, await afs.workspaces.use(name), (w) => `now using workspace ${w.name}`);
    }),
  );

  leaf(ws, "fork <source> <new>", "create a workspace from another's live state")
    .option("--description <text>", "what the fork is for")
    .action((source: string, name: string, flags: DescriptionFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const info = await afs.workspaces.fork(source, name, { description: flags.description });
        io.emit(flags, info, (w) => `forked ${source} into ${w.name}`);
      }),
    );

  leaf(ws, "delete <name>", "delete a workspace and its checkpoints").action(
    (name: string, flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        await afs.workspaces.delete(name);
        io.emit(flags, { deleted: name }, () => `deleted workspace ${name}`);
      }),
  );

  leaf(ws, "import <name> <dir>", "create a workspace from a directory (honours .gitignore and .afsignore)")
    .option("--description <text>", "what the workspace is for")
    .option(
      "--strict",
      "refuse the import when a file is over AFS_MAX_FILE_BYTES (default 16 GiB) instead of skipping it",
    )
    .action((name: string, dir: string, flags: DescriptionFlags & { strict?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const bar = progressBar("importing", io.invocation.stderr);
        const result = await afs.workspaces
          .import(name, io.path(dir), {
            description: flags.description,
            onProgress: bar.update,
            strict: flags.strict,
          })
          .finally(() => bar.stop());
        for (const s of result.skipped) io.warn(`afs: warning: skipped ${s.path}: ${s.reason}\n`);
        // Many files: grep's content index is built in the background (see afs index status).
        await startBuilderAfter(afs, io.env, result.files);
        io.emit(
          flags,
          result,
          (r) => `imported ${plural(r.files, "file")} (${bytes(r.bytes)}) from ${dir} into workspace ${name}`,
        );
      }),
    );

  leaf(ws, "export <name> <dir>", "write a workspace's live state (or a checkpoint) into a new or empty directory")
    .option("--checkpoint <name>", "export this checkpoint instead of the live state")
    .option(
      "--force",
      "export into a non-empty directory: keep what it holds as a safety checkpoint, then make it equal to the export (ignored files stay)",
    )
    .action((name: string, dir: string, flags: JsonFlag & { checkpoint?: string; force?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const bar = progressBar("exporting", io.invocation.stderr);
        const result = await afs.workspaces
          .export(name, io.path(dir), {
            checkpoint: flags.checkpoint,
            force: flags.force,
            onProgress: bar.update,
          })
          .finally(() => bar.stop());
        io.emit(flags, result, (r) => {
          const lines = [`exported ${plural(r.files, "file")} (${bytes(r.bytes)}) to ${dir}`];
          if (flags.force) {
            lines[0] += ` (${plural(r.written ?? 0, "file")} written, ${plural(r.removed ?? 0, "entry", "entries")} removed)`;
            lines.push(
              r.safety
                ? `what ${dir} held is saved as checkpoint ${r.safety.name}; undo with: afs ws export ${name} ${dir} --checkpoint ${r.safety.name} --force`
                : `what ${dir} held was already in a checkpoint; nothing saved`,
            );
          }
          return lines;
        });
      }),
    );
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("expected a whole number (0 or more)");
  return n;
}
