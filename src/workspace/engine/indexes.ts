// `afs.indexes`: the home's search indexes, keyed by content hash so one set serves every
// workspace and checkpoint: grep's content index, ranked search's index, and `afs index`'s
// status and build over them.
import type { PassageIndex } from "../../search/passage-index.js";
import type { SqliteTextIndex } from "../../store/search/text-index-sqlite.js";
import type { BackgroundBuild } from "../index-builder.js";
import type { BuildOptions, BuildResult, IndexStatus } from "../search-indexes.js";
import type { Engine } from "./engine.js";
import type { Workspaces } from "./workspaces.js";

export class Indexes {
  constructor(
    private readonly engine: Engine,
    private readonly workspaces: Workspaces,
  ) {}

  /** grep's content index (trigrams keyed by content hash) and text cache. */
  get text(): SqliteTextIndex {
    return this.engine.search.text;
  }

  /** Ranked search's index (passages, BM25, vectors; keyed by content hash). */
  get query(): PassageIndex {
    return this.engine.search.query;
  }

  /** What the indexes hold against what the named workspaces (all when none is) hold. */
  async status(workspaces: readonly string[] = []): Promise<IndexStatus> {
    const { indexStatus } = await import("../search-indexes.js");
    return indexStatus(this.source(), workspaces);
  }

  /** Indexes what the named workspaces (all when none is) hold and the indexes lack. */
  async build(workspaces: readonly string[], options: BuildOptions = {}): Promise<BuildResult> {
    const { buildIndexes } = await import("../search-indexes.js");
    return buildIndexes(
      { ...this.source(), store: this.engine.store, settings: this.engine.settings },
      workspaces,
      options,
    );
  }

  /**
   * Builds grep's content index over every workspace as the background builder, process `pid`,
   * in bounded memory; null when another builder is at it already.
   */
  async buildInBackground(
    pid: number,
    onProgress?: (done: number, total: number, indexed: number) => void,
    stop?: AbortSignal,
  ): Promise<BackgroundBuild | null> {
    const { buildContentIndex } = await import("../index-builder.js");
    return buildContentIndex(this.engine, pid, onProgress, stop);
  }

  /** Calls `start` when a search leaves contents not indexed yet to a builder (see SearchFiles.onBacklog). */
  whenBehind(start: (missing: number) => void): void {
    this.engine.search.onBacklog = start;
  }

  private source() {
    return { workspaces: this.workspaces, search: this.engine.search };
  }
}
