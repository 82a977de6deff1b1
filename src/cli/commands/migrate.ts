// `afs migrate --from STORE --to STORE`: copies workspaces with their history and the tokens
// between stores (SQLite ⇄ Redis), with a progress bar, and checks the target afterwards.
import type { Command } from "commander";
import { readSettings, storeUrlFrom } from "../../core/settings.js";
import { openStore } from "../../store/open.js";
import type { Store } from "../../store/store.js";
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
      const { migrate } = await import("../../workspace/migrate.js");
      const stores: Store[] = [];
      const bar = progressBar("copying", io.invocation.stderr);
      try {
        // Relative SQLite paths are the caller's directory's files; a Redis password may come from the settings.
        const source = await openStore(storeUrlFrom(flags.from, io.cwd), { env: readSettings(io.env).env });
        stores.push(source);
        const target = await openStore(storeUrlFrom(flags.to, io.cwd), { env: readSettings(io.env).env });
        stores.push(target);
        const result = await migrate(source, target, { workspaces: flags.workspace, onProgress: bar.update });
        bar.stop();
        io.emit(flags, result, (r) => [
          `copied ${plural(r.workspaces.length, "workspace")} (${plural(r.checkpoints, "checkpoint")}, ${plural(r.events, "event")}) from ${source.url} to ${target.url}`,
          `objects: ${plural(r.blobs_copied, "blob")} copied (${bytes(r.bytes_copied)}), ${r.objects_present} already there, ${plural(r.trees, "tree")}`,
          `tokens: ${r.tokens_copied} copied, ${r.tokens_present} already there`,
          r.fsck.ok
            ? `fsck of the target: ok (${plural(r.fsck.trees_checked, "tree")} and ${plural(r.fsck.blobs_checked, "blob")} checked)`
            : [`fsck of the target found problems:`, ...r.fsck.problems].join("\n"),
        ]);
        if (!result.fsck.ok) throw new ExitStatus(1);
      } finally {
        bar.stop();
        await Promise.allSettled(stores.map((s) => s.close()));
      }
    });
}
