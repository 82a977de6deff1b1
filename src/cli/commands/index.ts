// `afs index status|build|rebuild`: the search indexes (file_query's chunks and vectors, file_grep's
// content index) against the workspaces' live files. Without -w, every workspace.
import { setPriority } from "node:os";
import type { Command } from "commander";
import type { IndexStatus } from "../../workspace/search-indexes.js";
import { globalOptions, globals, type Io } from "../context.js";
import { startIndexBuilder } from "../index-builder.js";
import { bytes, type JsonFlag, plural, table } from "../output.js";
import { type ProgressBar, progressBar } from "../progress.js";
import { leaf } from "./leaf.js";

interface BuildFlags extends JsonFlag {
  embeddings?: boolean;
}

const STAGES = { chunks: "chunking", text: "content index", vectors: "embedding" } as const;

/** The workspace -w names, or none for every workspace. */
function chosenWorkspaces(cmd: Command): string[] {
  const name = globals(cmd).workspace;
  return name ? [name] : [];
}

/** The background builder's progress line (or that none is at work). */
function building(s: IndexStatus): string {
  const b = s.text.building;
  if (!b) return "content index builder: not running";
  const seconds = Math.round((b.updated - b.started) / 1000);
  if (b.mapping) {
    return `content index builder: mapping paths of ${plural(b.mapping.trees, "head tree")} (pid ${b.pid}): ${plural(b.mapping.files, "file")} mapped, after ${plural(b.indexed, "content")} indexed, ${seconds} s in all`;
  }
  const counted =
    b.total > 0 ? `${b.done}/${b.total} files walked (${Math.floor((100 * b.done) / b.total)}%)` : "counting files";
  return `content index builder: building (pid ${b.pid}): ${counted}, ${plural(b.indexed, "content")} indexed in ${seconds} s; searches scan what is not indexed yet`;
}

/** Which workspaces' head trees grep's content index has mapped (their first search lists nothing). */
function mapped(workspaces: IndexStatus["workspaces"]): string {
  const names = workspaces.filter((w) => w.mapped).map((w) => w.name);
  return `grep's path maps: ${names.length}/${plural(workspaces.length, "head tree")} mapped${names.length > 0 && names.length < workspaces.length ? ` (${names.join(", ")})` : ""}`;
}

function renderStatus(s: IndexStatus): string[] {
  const vectors = s.provider !== null;
  const row = (name: string, c: IndexStatus["total"]): string[] => [
    name,
    String(c.files),
    `${c.blobs} (${bytes(c.bytes)})`,
    `${c.chunked}/${c.blobs}`,
    String(c.chunks),
    ...(vectors ? [`${c.vectors ?? 0}/${c.chunks}`] : []),
  ];
  return [
    `index file  ${s.index_file} (${bytes(s.index_bytes)})`,
    `embeddings  ${s.provider ?? `none: ${s.provider_note ?? ""}`}`,
    "",
    ...table(
      ["WORKSPACE", "FILES", "CONTENTS", "CHUNKED", "CHUNKS", ...(vectors ? ["VECTORS"] : [])],
      [...s.workspaces.map((w) => row(w.name, w)), ...(s.workspaces.length > 1 ? [row("(all)", s.total)] : [])],
    ),
    "",
    building(s),
    mapped(s.workspaces),
    `stored: ${plural(s.stored.blobs, "content")} chunked into ${plural(s.stored.chunks, "chunk")}${vectors ? `, ${plural(s.stored.vectors ?? 0, "vector")}` : ""}; grep's content index: ${plural(s.text.texts, "text")}, ${s.text.binary} binary, ${s.text.large} too large (${bytes(s.text.bytes)})`,
  ];
}

export function registerIndexCommands(program: Command, io: Io): void {
  const index = program
    .command("index")
    .description("show and build the search indexes (file_query chunks and vectors, file_grep content index)");

  leaf(index, "status", "what the indexes hold against the workspaces' live files (all workspaces unless -w)")
    .option("-w, --workspace <name>", "only this workspace")
    .action((flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        io.emit(flags, await afs.indexes.status(chosenWorkspaces(cmd)), renderStatus);
      }),
    );

  // The builder itself, started in the background (index-builder.ts): no output, its progress is in the index file.
  globalOptions(index.command("builder", { hidden: true }))
    .option("--background", "run at a low priority (as started on its own)")
    .action((flags: { background?: boolean }, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        // Behind whatever the machine is doing for people.
        if (flags.background) setPriority(process.pid, 10);
        // A signal stops it between batches, before the engine closes under it.
        const stop = new AbortController();
        for (const signal of ["SIGTERM", "SIGINT"] as const) process.prependOnceListener(signal, () => stop.abort());
        await afs.indexes.buildInBackground(process.pid, undefined, stop.signal);
      }),
    );

  leaf(index, "background", "build grep's content index in a background process (progress: afs index status)").action(
    (flags: JsonFlag, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const pid = await startIndexBuilder(afs, io.env);
        const running = afs.indexes.text.building();
        io.emit(flags, { started: pid !== null, pid: pid ?? running?.pid ?? null }, (r) =>
          r.started
            ? `building grep's content index in the background (pid ${r.pid}); see afs index status`
            : `a builder is at work already${r.pid ? ` (pid ${r.pid})` : ""}; see afs index status`,
        );
      }),
  );

  for (const [name, rebuild, summary] of [
    ["build", false, "index what is missing: chunks and grep's content index (and vectors with --embeddings)"],
    ["rebuild", true, "drop the chunk and content indexes (and with --embeddings the vectors), then build"],
  ] as const) {
    leaf(index, name, summary)
      .option("-w, --workspace <name>", "only this workspace's files (default: every workspace)")
      .option("--embeddings", "also compute missing vectors with the configured embedding provider")
      .action((flags: BuildFlags, cmd: Command) =>
        io.withAfs(cmd, async (afs) => {
          // Stages run one after another: each new stage stops the previous stage's bar.
          let current: { stage: keyof typeof STAGES; bar: ProgressBar } | undefined;
          const result = await afs.indexes
            .build(chosenWorkspaces(cmd), {
              embeddings: flags.embeddings,
              rebuild,
              onProgress: (stage, done, total) => {
                if (current?.stage !== stage) {
                  current?.bar.stop();
                  current = {
                    stage,
                    // Files walked (chunks, content index) or passages embedded: counts, not bytes.
                    bar: progressBar(STAGES[stage], io.invocation.stderr, String),
                  };
                }
                current.bar.update?.(done, total);
              },
            })
            .finally(() => current?.bar.stop());
          io.emit(flags, result, (r) => [
            `${plural(r.workspaces.length, "workspace")}: ${plural(r.blobs, "distinct content")} (${bytes(r.bytes)})`,
            `chunks: ${r.chunks.blobs_added} contents chunked in ${(r.chunks.ms / 1000).toFixed(1)} s`,
            `content index: ${r.text.indexed} contents (${bytes(r.text.bytes)}) indexed in ${(r.text.ms / 1000).toFixed(1)} s; ${plural(r.text.mapped ?? 0, "head tree")} mapped`,
            ...(r.vectors
              ? [
                  `vectors: ${r.vectors.embedded} chunks embedded by ${r.vectors.provider} in ${(r.vectors.ms / 1000).toFixed(1)} s`,
                ]
              : []),
          ]);
        }),
      );
  }
}
