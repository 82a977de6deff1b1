// Watches a directory tree and collects the volume paths that changed since the last take(), so a
// record can examine O(changes) paths instead of rescanning the tree. One non-recursive watch
// (inotify) per content directory: Node 20's recursive fs.watch on Linux is a JS tree walk (2.5 s
// and 240 MB for 100k files, against 0.1 s and 11 MB here; bench/record-checkpoint.ts).
import { randomBytes } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { lstat, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AfsError } from "../core/errors.js";
import { baseName, joinPath, ROOT, segments } from "../core/paths.js";
import { IGNORE_FILES, type IgnoreScope, isIgnored, isSkippedName, scopesInside, TEMP_NAME } from "./dir-scan.js";

export interface WatchTake {
  /** Volume paths that changed ("/src/a.ts"); a directory stands for its whole subtree. */
  paths: string[];
  /**
   * False when changes may have been missed (a watch failed, a directory could not be watched, too
   * many paths, or the barrier timed out): the caller must examine the whole tree instead.
   */
  complete: boolean;
}

export interface DirWatcherOptions {
  /** Past this many distinct paths the set is dropped and the take is incomplete. Default 10,000. */
  maxPaths?: number;
  /** How long take() waits for its barrier file to be seen. Default 2,000 ms. */
  barrierTimeoutMs?: number;
  /** Told (without the path) each time a change is collected or lost, so a sync can wake up and take(). */
  onChange?: () => void;
}

interface Watched {
  watcher: FSWatcher;
  scopes: IgnoreScope[];
  /** The directory's inode: a directory removed and recreated under the same name needs a new watch. */
  ino: number;
}

export class DirWatcher {
  private readonly dirs = new Map<string, Watched>();
  private paths = new Set<string>();
  /** Something was lost since the last take. */
  private lost = false;
  /** A directory could not be watched: every take is incomplete until the watcher is reopened. */
  private broken = false;
  private closed = false;
  private readonly pending = new Set<Promise<void>>();
  private readonly barriers = new Map<string, () => void>();
  private readonly maxPaths: number;
  private readonly barrierTimeoutMs: number;
  private readonly onChange: (() => void) | undefined;

  private constructor(
    /** The directory's real path. */
    readonly root: string,
    options: DirWatcherOptions,
  ) {
    this.maxPaths = options.maxPaths ?? 10_000;
    this.barrierTimeoutMs = options.barrierTimeoutMs ?? 2_000;
    this.onChange = options.onChange;
  }

  /** Starts watching every content directory under `root` (a real path); changes from now on are collected. */
  static async open(root: string, options: DirWatcherOptions = {}): Promise<DirWatcher> {
    const w = new DirWatcher(root, options);
    await w.addTree(ROOT, []);
    return w;
  }

  /** How many directories are watched. */
  get watching(): number {
    return this.dirs.size;
  }

  /**
   * The paths changed since the previous take. Every change made on disk before the call is
   * included: a barrier file is written in the root and its event awaited, and directories found
   * meanwhile are watched before the set is handed over.
   */
  async take(): Promise<WatchTake> {
    if (this.closed) throw new AfsError("INVALID_ARGUMENT", "the directory watcher is closed; open a new one");
    const seen = await this.barrier();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    const complete = seen && !this.lost && !this.broken;
    const paths = complete ? [...this.paths] : [];
    this.paths = new Set();
    this.lost = false;
    return { paths, complete };
  }

  close(): void {
    this.closed = true;
    for (const { watcher } of this.dirs.values()) watcher.close();
    this.dirs.clear();
    for (const release of this.barriers.values()) release();
  }

  /** Writes a hidden temp file in the root and waits for its event: inotify delivers in order. */
  private async barrier(): Promise<boolean> {
    const name = `.afs-${randomBytes(8).toString("hex")}.tmp`;
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.barriers.set(name, () => resolve(true));
      timer = setTimeout(() => resolve(false), this.barrierTimeoutMs);
    });
    try {
      await writeFile(join(this.root, name), "");
      return await seen;
    } catch {
      return false; // a read-only root cannot hold a barrier: fall back to a full record
    } finally {
      clearTimeout(timer);
      this.barriers.delete(name);
      await rm(join(this.root, name), { force: true }).catch(() => {});
    }
  }

  private mark(path: string): void {
    this.onChange?.();
    if (this.lost) return;
    this.paths.add(path);
    if (this.paths.size > this.maxPaths) {
      this.lost = true;
      this.paths = new Set();
    }
  }

  private track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  /** Watches `dir` and every content directory below it that is not watched yet. */
  private async addTree(dir: string, parentScopes: readonly IgnoreScope[]): Promise<void> {
    if (this.closed) return;
    const abs = join(this.root, ...segments(dir));
    const rel = segments(dir).join("/");
    let names: string[];
    let scopes: IgnoreScope[];
    if (!this.dirs.has(dir)) {
      let watcher: FSWatcher;
      try {
        watcher = watch(abs, { persistent: false }, (_event, name) => this.onEvent(dir, name));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "ENOENT" || code === "ENOTDIR") return; // gone again: its parent's event covers it
        // Not readable (chmod 000): nothing in it can be recorded now either; its parent's watch hears
        // the permission change (an attribute event for its name), and it is watched then.
        if (code === "EACCES" || code === "EPERM") return;
        this.broken = true; // e.g. ENOSPC: the inotify watch limit (fs.inotify.max_user_watches)
        return;
      }
      watcher.on("error", () => {
        this.lost = true;
        this.unwatch(dir);
      });
      this.dirs.set(dir, { watcher, scopes: [], ino: -1 });
    }
    try {
      const watched = this.dirs.get(dir);
      if (watched) watched.ino = (await lstat(abs)).ino;
      names = await readdir(abs);
      scopes = await scopesInside(abs, rel, parentScopes, names);
    } catch {
      this.unwatch(dir);
      return;
    }
    const watched = this.dirs.get(dir);
    if (watched) watched.scopes = scopes;
    const stats = await Promise.all(
      names.filter((n) => !isSkippedName(n)).map(async (n) => ({ n, st: await lstat(join(abs, n)).catch(() => null) })),
    );
    for (const { n, st } of stats) {
      if (!st?.isDirectory() || isIgnored(scopes, rel ? `${rel}/${n}` : n, true)) continue;
      await this.addTree(joinPath(dir, n), scopes);
    }
  }

  private unwatch(dir: string): void {
    for (const [d, { watcher }] of this.dirs) {
      if (d === dir || d.startsWith(dir === ROOT ? "/" : `${dir}/`)) {
        watcher.close();
        this.dirs.delete(d);
      }
    }
  }

  private onEvent(dir: string, name: string | null): void {
    if (this.closed) return;
    if (name === null) {
      this.lost = true; // the kernel did not say which entry: only a full record is safe
      this.onChange?.();
      return;
    }
    if (TEMP_NAME.test(name)) {
      this.barriers.get(name)?.();
      return;
    }
    if (isSkippedName(name)) return;
    const path = joinPath(dir, name);
    this.mark(path);
    const scopes = this.dirs.get(dir)?.scopes ?? [];
    // A new directory gets its watches; new ignore rules may reveal directories not watched yet.
    if (IGNORE_FILES.includes(name)) {
      this.track(this.addTree(dir, this.parentScopes(dir)));
    } else if (!this.dirs.has(path)) {
      this.track(
        lstat(join(this.root, ...segments(path)))
          .then((st) => {
            if (!st.isDirectory()) return;
            if (isIgnored(scopes, segments(path).join("/"), true)) return;
            return this.addTree(path, scopes);
          })
          .catch(() => {}),
      );
    } else {
      // A watched directory renamed or removed: its watches are stale; a new one with that name is watched afresh.
      this.track(
        lstat(join(this.root, ...segments(path)))
          .then((st) => {
            if (st.ino === this.dirs.get(path)?.ino) return;
            this.unwatch(path);
            if (st.isDirectory() && !isIgnored(scopes, segments(path).join("/"), true))
              return this.addTree(path, scopes);
          })
          .catch(() => this.unwatch(path)),
      );
    }
  }

  /** The scopes in force in `dir`'s parent (those `dir`'s own rules are added to). */
  private parentScopes(dir: string): IgnoreScope[] {
    if (dir === ROOT) return [];
    const parent = dir.slice(0, dir.length - baseName(dir).length - 1) || ROOT;
    return this.dirs.get(parent)?.scopes ?? [];
  }
}
