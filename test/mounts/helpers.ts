// Two machines in effect: engines in homes of their own on one store (a SQLite file, or a Redis
// server when the store is "redis"), each mounting the workspace in a directory of its own.
import { lstat, readdir, readFile, readlink, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach } from "vitest";
import { Mount, type MountOptions } from "../../src/mounts/mount.js";
import { TEMP_NAME } from "../../src/volume/dir-scan.js";
import { Afs } from "../../src/workspace/afs.js";
import { redisFactory } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";

export interface Machine {
  afs: Afs;
  home: string;
  dir: string;
  mount?: Mount;
}

/** Workspace names unique in this process: tests on one Redis server share its keys. */
let named = 0;

export class World {
  private readonly cleanups: (() => Promise<void>)[] = [];
  readonly machines: Machine[] = [];
  private readonly deferred: (() => Promise<void>)[] = [];

  constructor(private readonly storeUrl: (home: string) => string) {}

  /** A fresh engine with its own home and an empty directory beside it. */
  async machine(name: string): Promise<Machine> {
    const h = await tempDir(`afs-home-${name}-`);
    const d = await tempDir(`afs-mnt-${name}-`);
    // Retried: a file the engine's last writes leave (a WAL being checkpointed) may appear meanwhile.
    for (const dir of [h.dir, d.dir])
      this.cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
    const shared = this.machines[0]?.home ?? h.dir;
    const afs = await Afs.open({ home: h.dir, store: this.storeUrl(shared), actor: name });
    const m: Machine = { afs, home: h.dir, dir: join(d.dir, "work") };
    this.machines.push(m);
    return m;
  }

  /** Runs `fn` when the world closes, after the mounts stop and before the directories go. */
  defer(fn: () => Promise<void>): void {
    this.deferred.push(fn);
  }

  workspace(): string {
    return `mnt-${process.pid}-${++named}`;
  }

  async mount(m: Machine, options: Omit<MountOptions, "dir"> & { dir?: string }): Promise<Mount> {
    m.mount = await Mount.start(m.afs, { dir: m.dir, host: "h", ...options });
    return m.mount;
  }

  async close(): Promise<void> {
    for (const m of this.machines.splice(0)) {
      await m.mount?.stop().catch(() => {});
      await m.afs.close().catch(() => {});
    }
    for (const fn of this.deferred.splice(0)) await fn();
    for (const c of this.cleanups.splice(0)) await c();
  }
}

/**
 * Everything in a directory as {relative path: content | "->target" | "dir" (+ " x" when
 * executable)}. A sync may be changing it while it is read (tests poll it): what vanishes
 * meanwhile is left out, and the next poll sees the result.
 */
export async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const gone = (e: unknown): null => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw e;
  };
  const visit = async (abs: string, rel: string): Promise<void> => {
    for (const name of ((await readdir(abs).catch(gone)) ?? []).sort()) {
      if (name === ".git" || TEMP_NAME.test(name)) continue;
      const a = join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = await lstat(a).catch(gone);
      if (!st) continue;
      if (st.isSymbolicLink()) {
        const target = await readlink(a).catch(gone);
        if (target !== null) out[r] = `->${target}`;
      } else if (st.isDirectory()) {
        out[r] = "dir";
        await visit(a, r);
      } else {
        const text = await readFile(a, "utf8").catch(gone);
        if (text !== null) out[r] = text + (st.mode & 0o100 ? " x" : "");
      }
    }
  };
  await visit(dir, "");
  return out;
}

/** Polls `check` until it holds (a generous deadline: convergence, never a sleep). */
export async function until(check: () => Promise<boolean> | boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Flushes every running mount a few times over, so both sides have seen each other's changes. */
export async function settle(...ms: Machine[]): Promise<void> {
  for (let i = 0; i < 2; i++) for (const m of ms) await m.mount?.flush();
}

/**
 * For a describe block on one store: a fresh World per test (`fresh()`), closed after each test.
 * Redis runs share one server the suite starts; SQLite runs a file in the first machine's home.
 */
export function worldsOn(storeName: string): () => World {
  const redis = storeName === "redis" ? redisFactory().server : null;
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  return () => {
    world = new World((home) => (redis ? redis().url : `sqlite:${home}/afs.db`));
    return world;
  };
}
