// Change notifications for resources, driven by each workspace's event log follower, so a write
// through any process or machine sharing the store reaches the subscriber (SQLite: the log file's
// watch wakes the follower at once; Redis: XREAD). One follower per workspace per watch.
import { isWithin } from "../../../core/paths.js";
import type { EventFollower, EventRecord } from "../../../workspace/afs.js";
import { authorize, listedWorkspace, type ResourceContext } from "./context.js";

/** Events that change no file's content: a checkpoint only names the live state, a directory holds no bytes. */
export const NO_CONTENT_CHANGE: ReadonlySet<string> = new Set(["checkpoint", "mkdir"]);

/** Whether an event changes which files there are (not only what one holds). */
export const changesTheList = (e: EventRecord): boolean =>
  !NO_CONTENT_CHANGE.has(e.op) && (e.oldHash === null || e.newHash === null || e.path === "/");

export interface WatchHandlers {
  /** A watched file changed (written, edited, deleted, renamed away, restored); called once per batch of events. */
  onUpdated(uri: string): void;
  /** The listed workspace gained or lost files; only after `watchList()`. */
  onListChanged?(): void;
}

/**
 * What one session watches. `add` checks the URI as a read would (profile, pinned workspace, the
 * workspace and checkpoint exist) but not the file, which may appear later; a checkpoint URI is
 * accepted and never fires, since a checkpoint never changes.
 */
export class ResourceWatch {
  /** workspace → (uri → its path). */
  readonly #watched = new Map<string, Map<string, string>>();
  readonly #followers = new Map<string, Promise<EventFollower>>();
  #listed: string | null = null;
  #closed = false;

  constructor(
    private readonly ctx: ResourceContext,
    private readonly handlers: WatchHandlers,
  ) {}

  async add(uri: string): Promise<void> {
    const a = await authorize(this.ctx, uri);
    if (a.checkpoint !== null) {
      await this.ctx.afs.checkpoints.get(a.workspace, a.checkpoint);
      return;
    }
    await this.follow(a.workspace);
    const uris = this.#watched.get(a.workspace) ?? new Map<string, string>();
    this.#watched.set(a.workspace, uris.set(uri, a.path));
  }

  /** Stops watching a URI; one never added is no error (unsubscribing twice is harmless). */
  remove(uri: string): void {
    for (const uris of this.#watched.values()) uris.delete(uri);
  }

  /** Also reports when the listed workspace (as resources/list chooses it) gains or loses files. */
  async watchList(): Promise<void> {
    if (!this.handlers.onListChanged || this.#listed !== null) return;
    const workspace = await listedWorkspace(this.ctx);
    if (workspace === null) return;
    this.#listed = workspace;
    await this.follow(workspace);
  }

  close(): void {
    this.#closed = true;
    for (const f of this.#followers.values()) void f.then((follower) => follower.close());
    this.#followers.clear();
    this.#watched.clear();
  }

  /** Starts the workspace's follower from its revision now, so nothing written after this call is missed. */
  private follow(workspace: string): Promise<EventFollower> {
    let follower = this.#followers.get(workspace);
    if (!follower) {
      follower = this.ctx.afs.workspaces.get(workspace).then(({ revision }) => {
        const f = this.ctx.afs.events.follow(workspace, revision, (events) => this.deliver(workspace, events));
        if (this.#closed) f.close();
        return f;
      });
      this.#followers.set(workspace, follower);
      // A failed start (the workspace went away) is retried by the next add.
      follower.catch(() => this.#followers.delete(workspace));
    }
    return follower;
  }

  private deliver(workspace: string, events: readonly EventRecord[]): void {
    if (this.#closed) return;
    const changes = events.filter((e) => !NO_CONTENT_CHANGE.has(e.op));
    const uris = this.#watched.get(workspace);
    if (uris) {
      for (const [uri, path] of uris) {
        // A change at the file or at any directory above it (a delete, rename or restore of the directory).
        if (changes.some((e) => isWithin(path, e.path))) this.handlers.onUpdated(uri);
      }
    }
    if (workspace === this.#listed && events.some(changesTheList)) this.handlers.onListChanged?.();
  }
}

/** Starts a watch on `uris` (the shape 2026-07-28's subscriptions/listen asks for); close() ends it. */
export async function watchResources(
  ctx: ResourceContext,
  uris: readonly string[],
  handlers: WatchHandlers,
  options: { listChanged?: boolean } = {},
): Promise<ResourceWatch> {
  const watch = new ResourceWatch(ctx, handlers);
  try {
    for (const uri of uris) await watch.add(uri);
    if (options.listChanged) await watch.watchList();
  } catch (e) {
    watch.close();
    throw e;
  }
  return watch;
}
