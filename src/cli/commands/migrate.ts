// `afs migrate --from STORE --to STORE`: copies workspaces with their history and the tokens
// between stores (SQLite ⇄ Redis), with a progress bar, and checks the target afterwards.
import type { Command } from "commander";
import type { Io } from "../context.js";
import { ExitStatus } from "../errors.js";
import { bytes, type JsonFlag, plural } from "../output.js";
import { progressBar } from "../progress.js";
import { leaf } from "./leaf.js";

interface MigrateFlags extends JsonFlag {
  from: string;
  to: string;
  workspace: string[];
}

export function registerMigrate(program: Command, io: Io): void {
  leaf(program, "migrate", "copy workspaces (with their whole history) and tokens from one store to another")
    .requiredOption("--from <url>", "the store to copy from (read only)")
    .requiredOption("--to <url>", "the store to copy into (created when it is a new SQLite file)")
    .option(
      "--workspace <name>",
      "copy only this workspace (repeat for more; default: all)",
      (v: string, acc: string[]) => [...acc, v],
      [],
    )
    .action(async (flags: MigrateFlags) => {
      const bar = progressBar("copying", io.invocation.stderr);
      try {
        // Relative SQLite paths are the caller's directory's files; a Redis password may come from its settings.
        const { Afs } = await import("../../workspace/afs.js");
        const { from, to, ...result } = await Afs.migrate(flags.from, flags.to, {
          workspaces: flags.workspace,
          onProgress: bar.update,
          env: io.env,
          cwd: io.cwd,
        });
        bar.stop();
        io.emit(flags, result, (r) => [
          `copied ${plural(r.workspaces.length, "workspace")} (${plural(r.checkpoints, "checkpoint")}, ${plural(r.events, "event")}) from ${from} to ${to}`,
          `objects: ${plural(r.blobs_copied, "blob")} copied (${bytes(r.bytes_copied)}), ${r.objects_present} already there, ${plural(r.trees, "tree")}`,
          `tokens: ${r.tokens_copied} copied, ${r.tokens_present} already there`,
          r.fsck.ok
            ? `fsck of the target: ok (${plural(r.fsck.trees_checked, "tree")} and ${plural(r.fsck.blobs_checked, "blob")} checked)`
            : [`fsck of the target found problems:`, ...r.fsck.problems].join("\n"),
        ]);
        if (!result.fsck.ok) throw new ExitStatus(1);
      } finally {
        bar.stop();
      }
    });
}
