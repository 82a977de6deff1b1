// The running watches: files/watch starts one (after the host's gate) and files/unwatch, a
// revocation or a removed root ends it. Each change goes out as notifications/files/changed in
// the path form the server uses.
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { AfsError } from "../../core/errors.js";
import { rebase } from "../../core/paths.js";
import type { Afs } from "../../workspace/afs.js";
import type { BrokerContext } from "./context.js";
import { keyOf, type Target } from "./paths.js";
import type { BrokerRoot } from "./roots.js";
import { type ChangeEvent, type WatchHandle, watchDisk, watchEvents } from "./watch.js";
import type { changedParams, watchParams } from "./wire.js";

export interface ActiveWatch {
  id: string;
  server: string;
  /** Consent key of the watched place (where it really lands). */
  key: string;
  root: BrokerRoot;
  handle: WatchHandle;
}

const MAX_WATCHES_PER_SERVER = 64;

export class Watches {
  private readonly active = new Map<string, ActiveWatch>();

  constructor(
    private readonly emit: (server: string, params: z.infer<typeof changedParams>) => void,
    private readonly display: (t: Target) => string,
    private readonly afs: Afs | undefined,
  ) {}

  async start(ctx: BrokerContext, p: z.infer<typeof watchParams>): Promise<{ watchId: string }> {
    const { target, real } = await ctx.authorize(p.path, "read");
    if (this.list().filter((w) => w.server === ctx.server).length >= MAX_WATCHES_PER_SERVER) {
      throw new AfsError("QUOTA_EXCEEDED", `at most ${MAX_WATCHES_PER_SERVER} watches per server; unwatch one first`);
    }
    const id = randomUUID();
    // Renames arrive as deleted + created, so asking for "renamed" selects those two.
    const wanted = new Set<string>(p.events ?? ["created", "modified", "deleted"]);
    if (wanted.has("renamed")) for (const e of ["created", "deleted"]) wanted.add(e);
    const sink = (path: string, event: ChangeEvent): void => {
      if (!wanted.has(event) || !this.active.has(id)) return;
      const shown = this.display({ root: target.root, path: rebase(path, real.path, target.path) });
      this.emit(ctx.server, { path: shown, event, timestamp: new Date().toISOString(), watchId: id });
    };
    const recursive = p.recursive === true;
    const root = real.root;
    let handle: WatchHandle;
    if (root.real !== null) handle = await watchDisk(root.real, real.path, recursive, sink);
    else {
      const afs = this.afs as Afs;
      const ws = root.workspace as string;
      const from = (await afs.workspaces.get(ws)).revision;
      handle = watchEvents(
        (after, onEvents) => afs.events.follow(ws, after, onEvents),
        from,
        async (path) => (await root.volume.stat(path)) !== null,
        real.path,
        recursive,
        sink,
      );
    }
    this.active.set(id, { id, server: ctx.server, key: keyOf(real), root, handle });
    return { watchId: id };
  }

  /** Ends one watch of `server`; NOT_FOUND when it has no such watch. */
  stop(server: string, id: string): void {
    const w = this.active.get(id);
    if (!w || w.server !== server) throw new AfsError("NOT_FOUND", `no watch ${id} is running for this server`);
    this.end(w);
  }

  stopWhere(which: (w: ActiveWatch) => boolean): void {
    for (const w of this.list()) if (which(w)) this.end(w);
  }

  list(): ActiveWatch[] {
    return [...this.active.values()];
  }

  private end(w: ActiveWatch): void {
    this.active.delete(w.id);
    w.handle.close();
  }
}
