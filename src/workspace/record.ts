// Recording an attached directory into its workspace: the live state becomes exactly what the disk
// holds. Files are compared by size and mtime with their live entries and read only when those
// differ, so a record costs one lstat per entry examined and one read per change; given a watcher's
// paths, only those are examined. All differences land as one Store commit (events op "record").
import { lstat, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { DIR_MODE, type Entry, SYMLINK_MODE } from "../core/entry.js";
import { EMPTY_SHA256, type Hash, sha256 } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import { ancestors, baseName, joinPath, normalizePath, parentOf, ROOT, segments } from "../core/paths.js";
import { keptChanging, RETRY, retryIfConflict, retryOnConflict } from "../core/retry.js";
import type { EventInput, OverlayRow, Store } from "../store/store.js";
import {
  type DiskEntry,
  diskEntry,
  IGNORE_FILES,
  type IgnoreScope,
  isIgnored,
  isSkippedName,
  kindOf,
  listDir,
  scopesInside,
} from "../volume/dir-scan.js";
import { storeFile } from "./blob-file.js";
import { type EngineContext, type Snapshot, snapshot } from "./snapshot.js";
import { TreeWriter } from "./tree.js";

/**
 * git's "racily clean" problem: a file written again within the same timestamp tick as the record
 * that read it keeps its size and mtime, so a stat match cannot prove it unchanged. A file whose
 * mtime is within this margin of the workspace's last commit (or later) is therefore always read.
 * 2 s covers coarse filesystem clocks; with the watcher, a later write also produces an event.
 */
export const RACY_MS = 2_000;
const BATCH_BYTES = 16 * 1024 * 1024;
const READ_CONCURRENCY = 16;

export interface RecordOptions {
  /**
   * Volume paths to examine ("/src/a.ts"; a directory means its subtree), e.g. from a directory
   * watcher. Without it the whole directory is examined. Named files are always read.
   */
  paths?: Iterable<string>;
}

export interface RecordResult {
  /** Files and symlinks that appeared (each file of a new directory counts). */
  added: number;
  /** Files and symlinks whose content, kind or mode changed. */
  modified: number;
  /** Paths that disappeared (a removed directory counts once). */
  deleted: number;
  /** Files and symlinks compared. */
  examined: number;
  /** Files read and hashed (the rest were judged by size and mtime). */
  hashed: number;
  /** The workspace revision after the record (unchanged when nothing changed). */
  revision: number;
}

interface Verified {
  size: number;
  mtime: number;
  hash: Hash;
}

/**
 * Files read whose bytes matched their live entry although their mtime did not (touched, or
 * rewritten by an export): their stat, so the next record need not read them again. Kept in memory
 * only, bounded, because putting it in the tree would turn a touch into a checkpoint.
 */
export class VerifiedStats {
  private readonly lru = new WeightedLru<string, Verified>(100_000, () => 1);

  hash(workspace: string, path: string, size: number, mtime: number): Hash | undefined {
    const v = this.lru.get(`${workspace}\0${path}`);
    return v && v.size === size && v.mtime === mtime ? v.hash : undefined;
  }

  /** Remembers a read; never a racy one (see RACY_MS), which may change again without its stat moving. */
  remember(workspace: string, path: string, v: Verified, now = Date.now()): void {
    if (v.mtime < now - RACY_MS) this.lru.set(`${workspace}\0${path}`, v);
  }
}

/** Brings workspace `workspace`'s live state to what directory `root` (a real path) holds. */
export async function recordDirectory(
  ctx: EngineContext,
  workspace: string,
  root: string,
  verified: VerifiedStats,
  options: RecordOptions = {},
): Promise<RecordResult> {
  const wanted = options.paths === undefined ? [ROOT] : recordTargets(options.paths);
  const reader = new BlobReader(ctx.store);
  // A lost race is recomputed against the winner's result (files already read are not read again).
  return retryOnConflict(
    async () => {
      const snap = await snapshot(ctx, workspace);
      const rec = new Recording(ctx, snap, root, reader, verified);
      await rec.run(wanted);
      const counts = { ...rec.counts, hashed: reader.hashed };
      if (rec.events.length === 0) return { ...counts, revision: snap.revision };
      await reader.flush();
      await rec.writer.flush(ctx.store);
      const revision = await retryIfConflict(
        ctx.store.commit(workspace, {
          expectRevision: snap.revision,
          clearUnder: rec.clearUnder,
          set: rec.rows,
          events: rec.events.map((e) => ({ ...e, actor: ctx.actor, surface: ctx.surface })),
        }),
      );
      return revision === RETRY ? RETRY : { ...counts, revision };
    },
    { giveUp: keptChanging(workspace, "during the record") },
  );
}

/**
 * The paths to examine: normalized, an ignore file standing for its whole directory (its rules
 * changed), temp files dropped, and nothing that lies inside another target.
 */
export function recordTargets(paths: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const raw of paths) {
    let p: string;
    try {
      p = normalizePath(raw);
    } catch {
      continue;
    }
    const name = baseName(p);
    if (IGNORE_FILES.includes(name)) p = parentOf(p);
    out.add(p);
  }
  return outermost(out);
}

/** The paths of `set` that lie inside no other path of it. */
function outermost(set: ReadonlySet<string>): string[] {
  if (set.has(ROOT)) return [ROOT];
  return [...set].filter((p) => !ancestors(p).some((a) => a !== ROOT && set.has(a))).sort();
}

/** Reads and hashes files for one record (across its retries), storing their blobs in batches. */
class BlobReader {
  hashed = 0;
  private readonly known = new Map<string, Verified>();
  private batch: { hash: Hash; data: Uint8Array }[] = [];
  private batchBytes = 0;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly store: Store) {}

  async file(disk: DiskEntry): Promise<Verified> {
    const hit = this.known.get(disk.abs);
    if (hit && hit.mtime === disk.mtime && hit.size === disk.size) return hit;
    if (disk.size > this.store.chunkBytes) {
      // Large files stream into the store (hashed and chunked in one pass), never read whole.
      const { hash, size } = await storeFile(this.store, disk.abs);
      this.hashed++;
      const v = { size, mtime: disk.mtime, hash };
      this.known.set(disk.abs, v);
      return v;
    }
    const data = await readFile(disk.abs);
    this.hashed++;
    const hash = data.length === 0 ? EMPTY_SHA256 : sha256(data);
    this.put(hash, data);
    // The size read wins over the stat's: the file may have changed in between (then its mtime
    // moved too, and the next record reads it again).
    const v = { size: data.length, mtime: disk.mtime, hash };
    this.known.set(disk.abs, v);
    return v;
  }

  /** Queues a blob for the store; empty content is never stored. */
  put(hash: Hash, data: Uint8Array): void {
    if (data.length === 0) return;
    this.batch.push({ hash, data });
    this.batchBytes += data.length;
    if (this.batchBytes >= BATCH_BYTES) this.startFlush();
  }

  private startFlush(): void {
    const blobs = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    if (blobs.length > 0) this.flushing = this.flushing.then(() => this.store.putBlobs(blobs));
  }

  async flush(): Promise<void> {
    this.startFlush();
    await this.flushing;
  }
}

type Ancestry = { scopes: IgnoreScope[] } | { blocked: string };

/** One attempt: compares disk with one snapshot's live state and collects the commit. */
class Recording {
  readonly rows: OverlayRow[] = [];
  readonly clearUnder: string[] = [];
  readonly events: Omit<EventInput, "actor" | "surface">[] = [];
  readonly writer = new TreeWriter();
  readonly counts = { added: 0, modified: 0, deleted: 0, examined: 0 };
  private readonly ancestry = new Map<string, Promise<Ancestry>>();
  private readonly workspace: string;
  /** Files with an mtime at or after this are read whatever their stat says (RACY_MS). */
  private readonly racyAfter: number;
  private readonly now = Date.now();

  constructor(
    private readonly ctx: EngineContext,
    private readonly snap: Snapshot,
    private readonly root: string,
    private readonly reader: BlobReader,
    private readonly verified: VerifiedStats,
  ) {
    this.workspace = snap.workspace.name;
    this.racyAfter = snap.workspace.updatedAt - RACY_MS;
  }

  async run(wanted: readonly string[]): Promise<void> {
    // A target whose parent is not (or no longer) a content directory on disk or in the live
    // state is examined from the highest such ancestor, so every row lands under a directory.
    const targets = new Set<string>();
    for (const p of wanted) targets.add(await this.effectiveTarget(p));
    for (const p of outermost(targets)) await this.examine(p);
  }

  private async effectiveTarget(path: string): Promise<string> {
    let p = path;
    while (p !== ROOT) {
      const up = await this.ancestryOf(parentOf(p));
      if ("blocked" in up) {
        p = up.blocked;
        continue;
      }
      const parent = parentOf(p);
      if (parent !== ROOT && (await this.snap.resolve(parent))?.kind !== "dir") {
        p = parent;
        continue;
      }
      break;
    }
    return p;
  }

  /** The ignore scopes inside directory `dir`, or the highest ancestor (or itself) that is not a content directory. */
  private ancestryOf(dir: string): Promise<Ancestry> {
    let found = this.ancestry.get(dir);
    if (!found) {
      found = (async (): Promise<Ancestry> => {
        if (dir === ROOT) return { scopes: await scopesInside(this.root, "", []) };
        const up = await this.ancestryOf(parentOf(dir));
        if ("blocked" in up) return up;
        const disk = await this.diskAt(dir, up.scopes);
        if (disk?.kind !== "dir") return { blocked: dir };
        return { scopes: await scopesInside(disk.abs, disk.rel, up.scopes) };
      })();
      this.ancestry.set(dir, found);
    }
    return found;
  }

  /** What the disk holds at `path` as content (null: nothing, or ignored), given the scopes of its parent. */
  private async diskAt(path: string, scopes: readonly IgnoreScope[]): Promise<DiskEntry | null> {
    const name = baseName(path);
    if (isSkippedName(name)) return null;
    const rel = segments(path).join("/");
    const abs = join(this.root, ...segments(path));
    const st = await lstat(abs).catch(() => null);
    const kind = st ? kindOf(st) : null;
    if (!st || !kind || isIgnored(scopes, rel, kind === "dir")) return null;
    return diskEntry(name, rel, abs, kind, st);
  }

  private async examine(p: string): Promise<void> {
    const rows = groupByDir(await this.ctx.store.overlayUnder(this.workspace, p));
    if (p === ROOT) {
      const live = (await this.snap.resolve(ROOT)) as Entry;
      const disk: DiskEntry = { name: "", rel: "", abs: this.root, kind: "dir", size: 0, mode: DIR_MODE, mtime: 0 };
      return this.examineDir(ROOT, disk, live, [], rows);
    }
    const up = (await this.ancestryOf(parentOf(p))) as { scopes: IgnoreScope[] };
    const disk = await this.diskAt(p, up.scopes);
    await this.compare(p, disk, await this.snap.resolve(p), up.scopes, rows, true);
  }

  private async compare(
    p: string,
    disk: DiskEntry | null,
    live: Entry | null,
    scopes: readonly IgnoreScope[],
    rows: RowsByDir,
    named: boolean,
  ): Promise<void> {
    if (!disk) {
      if (live) this.change(p, null, live);
      return;
    }
    if (disk.kind === "dir") {
      if (live?.kind === "dir") return this.examineDir(p, disk, live, scopes, rows);
      // A new directory (or one in place of a file): its whole content as one row with its own tree.
      return this.change(p, await this.buildDir(p, disk, scopes), live);
    }
    this.counts.examined++;
    const entry = disk.kind === "symlink" ? await this.symlinkEntry(disk) : await this.fileEntry(p, disk, live, named);
    if (live && live.kind === entry.kind && live.hash === entry.hash && live.mode === entry.mode) return;
    this.change(p, entry, live);
  }

  /** The file's entry, read only when its stat cannot vouch for the live one. */
  private async fileEntry(p: string, disk: DiskEntry, live: Entry | null, named: boolean): Promise<Entry> {
    if (live?.kind === "file" && !named) {
      const statMatches = live.size === disk.size && live.mtime === disk.mtime && live.mtime < this.racyAfter;
      if (statMatches || this.verified.hash(this.workspace, p, disk.size, disk.mtime) === live.hash) {
        return { ...live, mode: disk.mode };
      }
    }
    const read = await this.reader.file(disk);
    if (live?.kind === "file" && live.hash === read.hash) {
      // Same bytes under a new stat: no change, but the next record can trust this stat.
      if (read.mtime !== live.mtime) this.verified.remember(this.workspace, p, read, this.now);
      return { ...live, mode: disk.mode };
    }
    return { kind: "file", hash: read.hash, size: read.size, mode: disk.mode, mtime: disk.mtime };
  }

  private async examineDir(
    p: string,
    disk: DiskEntry,
    live: Entry,
    parentScopes: readonly IgnoreScope[],
    rows: RowsByDir,
  ): Promise<void> {
    const { entries, scopes } = await listDir(disk.abs, disk.rel, parentScopes);
    const liveChildren = new Map(await this.ctx.trees.get(live.hash));
    for (const row of rows.get(p) ?? []) {
      if (row.entry) liveChildren.set(baseName(row.path), row.entry);
      else liveChildren.delete(baseName(row.path));
    }
    const onDisk = new Map(entries.map((e) => [e.name, e]));
    const names = new Set([...onDisk.keys(), ...liveChildren.keys()]);
    for (const name of names) {
      await this.compare(
        joinPath(p, name),
        onDisk.get(name) ?? null,
        liveChildren.get(name) ?? null,
        scopes,
        rows,
        false,
      );
    }
  }

  /** Stores a new directory's content as trees (files read a few at a time) and returns its entry. */
  private async buildDir(p: string, disk: DiskEntry, parentScopes: readonly IgnoreScope[]): Promise<Entry> {
    const { entries, scopes } = await listDir(disk.abs, disk.rel, parentScopes);
    const children = new Map<string, Entry>();
    const files = entries.filter((e) => e.kind !== "dir");
    for (let i = 0; i < files.length; i += READ_CONCURRENCY) {
      await Promise.all(
        files.slice(i, i + READ_CONCURRENCY).map(async (e) => {
          const entry =
            e.kind === "symlink"
              ? await this.symlinkEntry(e)
              : { kind: "file" as const, ...(await this.reader.file(e)), mode: e.mode, mtime: e.mtime };
          children.set(e.name, entry);
          this.counts.examined++;
          this.counts.added++;
          this.events.push({ op: "record", path: joinPath(p, e.name), oldHash: null, newHash: entry.hash });
        }),
      );
    }
    for (const e of entries) {
      if (e.kind === "dir") children.set(e.name, await this.buildDir(joinPath(p, e.name), e, scopes));
    }
    return { kind: "dir", hash: this.writer.add(children), size: 0, mode: DIR_MODE, mtime: disk.mtime };
  }

  /** A symlink's entry: its target text is its content (stored like a file's bytes). */
  private async symlinkEntry(disk: DiskEntry): Promise<Entry> {
    const target = Buffer.from(await readlink(disk.abs));
    const hash = sha256(target);
    this.reader.put(hash, target);
    return { kind: "symlink", hash, size: target.length, mode: SYMLINK_MODE, mtime: disk.mtime };
  }

  /** One row at `p` (null: deleted), replacing whatever the live state had there and below. */
  private change(p: string, entry: Entry | null, live: Entry | null): void {
    if (live?.kind === "dir") this.clearUnder.push(p);
    if (entry?.kind === "dir") this.clearUnder.push(p);
    this.rows.push({ path: p, entry });
    const oldHash = live && live.kind !== "dir" ? live.hash : null;
    if (!entry) this.counts.deleted++;
    else if (entry.kind !== "dir") {
      if (live) this.counts.modified++;
      else this.counts.added++;
    } else if (live) this.counts.deleted++;
    this.events.push({ op: "record", path: p, oldHash, newHash: entry && entry.kind !== "dir" ? entry.hash : null });
  }
}

type RowsByDir = Map<string, OverlayRow[]>;

function groupByDir(rows: readonly OverlayRow[]): RowsByDir {
  const out: RowsByDir = new Map();
  for (const row of rows) {
    const dir = parentOf(row.path);
    const list = out.get(dir);
    if (list) list.push(row);
    else out.set(dir, [row]);
  }
  return out;
}
