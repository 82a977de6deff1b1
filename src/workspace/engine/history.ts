// `afs.history`: every version of a file from the event log, read, compared, restored (a file or a
// whole subtree, as one change) and undeleted; and each workspace's versioning policy, which says
// how long gc keeps old versions readable.
import type { Entry } from "../../core/entry.js";
import { AfsError } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import { normalizePath } from "../../core/paths.js";
import { decodeText } from "../../core/text.js";
import type { WorkspaceRecord } from "../../store/store.js";
import { type FileVersion, HistoryReader, shortId, type VersionPage } from "../history.js";
import { changePolicy, type PolicyChange, readPolicy, type VersioningPolicy } from "../versioning.js";
import { WorkspaceVolume } from "../workspace-volume.js";
import { type Engine, requireWorkspace } from "./engine.js";
import type { Workspaces } from "./workspaces.js";

export type { FileVersion, PolicyChange, VersioningPolicy, VersionPage };

const DEFAULT_VERSIONS = 20;
const MAX_VERSIONS_PAGE = 1000;
/** Ops recorded by restore and undelete, so the history says what brought a version back. */
export const RESTORE_OP = "restore_version";
export const UNDELETE_OP = "undelete";

export interface VersionContent {
  path: string;
  /** "version <id>" or "checkpoint <name>". */
  version: string;
  sha256: Hash;
  size: number;
  data: Buffer;
}

export interface VersionDiff {
  path: string;
  from: string;
  /** "live" when compared with the live file. */
  to: string;
  /** Unified diff; "" when both sides hold the same bytes. */
  patch: string;
  /** True when either side is not text (no patch then). */
  binary: boolean;
}

/** Who a restore is recorded as made by, and through what; the engine's own when absent. */
export interface Attribution {
  actor?: string | undefined;
  surface?: string | undefined;
}

export interface RestoreResult {
  path: string;
  /** What was restored: "version <id>" or "checkpoint <name>". */
  from: string;
  kind: Entry["kind"];
  sha256: Hash | null;
  /** The workspace's revision after the change (unchanged when nothing differed). */
  revision: number;
}

export class History {
  readonly #reader: HistoryReader;

  constructor(
    private readonly engine: Engine,
    private readonly workspaces: Workspaces,
  ) {
    this.#reader = new HistoryReader(engine.store, engine.trees);
  }

  /**
   * The versions of a file newest first (each with its id, time, actor, surface, operation, size,
   * sha256 and the checkpoints holding it), renames followed back; `cursor` pages on.
   */
  async versions(
    workspace: string,
    path: string,
    options: { limit?: number; cursor?: string } = {},
  ): Promise<VersionPage> {
    const limit = options.limit ?? DEFAULT_VERSIONS;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_VERSIONS_PAGE) {
      throw new AfsError("INVALID_ARGUMENT", `limit must be an integer from 1 to ${MAX_VERSIONS_PAGE}, not ${limit}`);
    }
    const record = await requireWorkspace(this.engine, workspace);
    const page: { limit: number; cursor?: string; record: WorkspaceRecord } = { limit, record };
    if (options.cursor !== undefined) page.cursor = options.cursor;
    return this.#reader.versions(workspace, normalizePath(path), page);
  }

  /** The bytes of a version of a file, named by its id or by a checkpoint. */
  async read(workspace: string, path: string, version: string): Promise<VersionContent> {
    const at = normalizePath(path);
    const { entry, label } = await this.resolveFile(workspace, at, version);
    return {
      path: at,
      version: label,
      sha256: entry.hash,
      size: entry.size,
      data: await this.bytes(at, entry.hash, label),
    };
  }

  /** A unified diff of a file between two versions (or checkpoints), by default from one to the live file. */
  async diff(workspace: string, path: string, from: string, to?: string): Promise<VersionDiff> {
    const at = normalizePath(path);
    const a = await this.read(workspace, at, from);
    let b: { label: string; data: Buffer | null };
    if (to === undefined) {
      const volume = await this.workspaces.volume(workspace);
      const live = await volume.stat(at);
      if (live && live.kind !== "file") throw notAFile(at, "the live state");
      b = { label: "live", data: live ? await volume.readFile(at) : null };
    } else {
      const other = await this.read(workspace, at, to);
      b = { label: other.version, data: other.data };
    }
    const before = decodeText(a.data);
    const after = b.data === null ? "" : decodeText(b.data);
    const binary = before === null || after === null;
    const same = b.data !== null && a.data.equals(b.data);
    // The diff library loads only when a diff is asked for: `afs fs cat` and the like never pay for it.
    const { unifiedPatch } = await import("../../core/unified-diff.js");
    const patch = binary || same ? "" : unifiedPatch(at, before, b.data === null ? null : after);
    return { path: at, from: a.version, to: b.label, patch, binary };
  }

  /**
   * Brings back a version of a file, or a directory as a checkpoint holds it (the whole subtree),
   * as one change recorded as `restore_version` on every file it changes.
   */
  async restore(workspace: string, path: string, from: string, by: Attribution = {}): Promise<RestoreResult> {
    const at = normalizePath(path);
    await requireWorkspace(this.engine, workspace);
    const target = await this.#reader.resolve(workspace, at, from);
    return this.place(workspace, at, target, RESTORE_OP, by);
  }

  /** Brings back what a deleted path last held (a directory from the newest checkpoint holding it). */
  async undelete(workspace: string, path: string, by: Attribution = {}): Promise<RestoreResult> {
    const at = normalizePath(path);
    const volume = await this.workspaces.volume(workspace);
    if (await volume.stat(at)) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${at} exists; to bring back an older version of it: afs fs restore ${at} --from VERSION`,
        { path: at },
      );
    }
    const last = await this.#reader.lastBeforeDelete(workspace, at);
    if (!last) {
      throw new AfsError("NOT_FOUND", `${at} was never deleted in workspace ${workspace}, nor is it in a checkpoint`, {
        path: at,
      });
    }
    return this.place(workspace, at, last, UNDELETE_OP, by);
  }

  /** The size of stored content by its hash (null: not stored, or collected by gc). */
  contentSize(hash: Hash): Promise<number | null> {
    return this.engine.store.blobSize(hash);
  }

  /** The workspace's versioning policy (default: versions kept 7 days). */
  async policy(workspace: string): Promise<VersioningPolicy> {
    await requireWorkspace(this.engine, workspace);
    return readPolicy(this.engine.store, workspace);
  }

  /** Changes the policy; unnamed fields stay as they were. */
  async setPolicy(workspace: string, change: PolicyChange): Promise<VersioningPolicy> {
    await requireWorkspace(this.engine, workspace);
    return changePolicy(this.engine.store, workspace, change);
  }

  private async place(
    workspace: string,
    path: string,
    target: { entry: Entry; label: string },
    op: string,
    by: Attribution,
  ): Promise<RestoreResult> {
    const { entry, label } = target;
    const e = this.engine;
    await requireWorkspace(e, workspace);
    const volume = new WorkspaceVolume(
      e.store,
      e.trees,
      e.roots,
      e.caches,
      workspace,
      by.actor ?? e.actor,
      by.surface ?? e.surface,
    );
    const done = await volume.place(path, entry, op);
    return {
      path,
      from: label,
      kind: entry.kind,
      sha256: entry.kind === "dir" ? null : entry.hash,
      revision: done.revision,
    };
  }

  private async resolveFile(
    workspace: string,
    path: string,
    version: string,
  ): Promise<{ entry: Entry; label: string }> {
    await requireWorkspace(this.engine, workspace);
    const found = await this.#reader.resolve(workspace, path, version);
    if (found.entry.kind !== "file") throw notAFile(path, found.label);
    return found;
  }

  private async bytes(path: string, hash: Hash, label: string): Promise<Buffer> {
    const data = await this.engine.store.getBlob(hash);
    if (!data) {
      throw new AfsError("NOT_FOUND", `${label} of ${path} (${shortId(hash)}) is no longer stored; gc collected it`, {
        path,
      });
    }
    return data;
  }
}

const notAFile = (path: string, where: string): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${path} is not a file in ${where}; only files have versions to read or compare`, {
    path,
  });
