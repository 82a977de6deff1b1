// Change events for 2026-07-28's subscriptions/listen over HTTP. afs serve answers each POST with
// a fresh server, but a listen stream outlives its request's server, so its events come from one
// bus per listed workspace (the one resources/list shows the stream's session): the workspaces' event
// logs, followed while any stream is open, turned into `resource_updated` for each watched URI a
// change touches (the file, or a directory above it: a delete, rename or restore) and
// `resources_list_changed` when files come or go in the listed workspace. The SDK's listen
// router then sends each stream what it asked for. A stream's URIs are checked (profile, pinned
// workspace) and registered before its request is dispatched, and released when it closes.
import { InMemoryServerEventBus, type ServerEvent, type ServerEventBus } from "@modelcontextprotocol/server";
import { isWithin } from "../../../core/paths.js";
import type { Afs, EventFollower, EventRecord } from "../../../workspace/afs.js";
import { changesTheList, NO_CONTENT_CHANGE } from "./watch.js";

interface Watched {
  workspace: string;
  path: string;
  /** Open streams watching it. */
  streams: number;
}

export class ListenBus implements ServerEventBus {
  readonly #inner = new InMemoryServerEventBus();
  readonly #watched = new Map<string, Watched>();
  #listeners = 0;
  #follower: EventFollower | null = null;

  /** `listed`: the workspace whose list changes its streams hear of (null: none). */
  constructor(
    private readonly afs: Afs,
    private readonly listed: string | null,
  ) {}

  publish(event: ServerEvent): void {
    this.#inner.publish(event);
  }

  subscribe(listener: (event: ServerEvent) => void): () => void {
    const unsubscribe = this.#inner.subscribe(listener);
    if (this.#listeners++ === 0) this.#follower = this.afs.events.followEvery((events) => this.deliver(events));
    let done = false;
    return () => {
      if (done) return;
      done = true;
      unsubscribe();
      if (--this.#listeners === 0) {
        this.#follower?.close();
        this.#follower = null;
      }
    };
  }

  /** Registers one stream's live-file URIs (already authorized); the returned function releases them. */
  watch(addresses: readonly { uri: string; workspace: string; path: string }[]): () => void {
    for (const a of addresses) {
      const w = this.#watched.get(a.uri) ?? { workspace: a.workspace, path: a.path, streams: 0 };
      w.streams++;
      this.#watched.set(a.uri, w);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const a of addresses) {
        const w = this.#watched.get(a.uri);
        if (w && --w.streams === 0) this.#watched.delete(a.uri);
      }
    };
  }

  private deliver(events: readonly EventRecord[]): void {
    const changes = events.filter((e) => !NO_CONTENT_CHANGE.has(e.op));
    for (const [uri, w] of this.#watched) {
      if (changes.some((e) => e.workspace === w.workspace && isWithin(w.path, e.path))) {
        this.publish({ kind: "resource_updated", uri });
      }
    }
    if (events.some((e) => e.workspace === this.listed && changesTheList(e))) {
      this.publish({ kind: "resources_list_changed" });
    }
  }
}
