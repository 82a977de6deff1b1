// files/list, files/create, files/delete and files/rename over a root's Volume, after the host's
// gate (authorize). Listings never follow a symlink (Volume.walk does not) and are paged by cursor.
import type { z } from "zod";
import { AfsError } from "../../core/errors.js";
import { baseName, ROOT, rebase, segments } from "../../core/paths.js";
import type { Stat } from "../../volume/volume.js";
import type { BrokerContext } from "./context.js";
import type { createParams, deleteParams, listEntry, listParams, listResult, renameParams } from "./wire.js";

type Entry = z.infer<typeof listEntry>;

const TYPE: Record<Stat["kind"], Entry["type"]> = { file: "file", dir: "directory", symlink: "symlink" };

export async function list(ctx: BrokerContext, p: z.infer<typeof listParams>): Promise<z.infer<typeof listResult>> {
  const { target, real } = await ctx.authorize(p.path, "read");
  const volume = real.root.volume;
  const st = await volume.stat(real.path);
  if (!st) throw new AfsError("NOT_FOUND", `${ctx.display(target)} does not exist`, { path: ctx.display(target) });
  if (st.kind !== "dir") {
    throw new AfsError("INVALID_ARGUMENT", `${ctx.display(target)} is not a directory`, { path: ctx.display(target) });
  }
  if (p.cursor !== undefined && !/^\d+$/.test(p.cursor)) {
    throw new AfsError("INVALID_ARGUMENT", "cursor is not one this broker gave out; start again without it");
  }
  const start = Number(p.cursor ?? 0);
  const hidden = (s: Stat): boolean =>
    segments(s.path)
      .slice(segments(real.path).length)
      .some((seg) => seg.startsWith("."));
  const entries: Entry[] = [];
  let more = false;
  // The cursor counts the entries shown (hidden ones excluded), so pages never overlap.
  let seen = 0;
  const take = (s: Stat): boolean => {
    if (!p.includeHidden && hidden(s)) return true;
    if (seen++ < start) return true;
    if (entries.length >= ctx.maxListEntries) {
      more = true;
      return false;
    }
    const shown = { root: target.root, path: rebase(s.path, real.path, target.path) };
    entries.push({
      path: ctx.display(shown),
      name: baseName(s.path),
      type: TYPE[s.kind],
      size: s.size,
      modified: new Date(s.mtime).toISOString(),
    });
    return true;
  };
  if (p.recursive) {
    for await (const s of volume.walk(real.path)) {
      ctx.signal.throwIfAborted();
      if (!take(s)) break;
    }
  } else {
    const children = (await volume.list(real.path)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const s of children) if (!take(s)) break;
  }
  return more ? { entries, nextCursor: String(start + entries.length) } : { entries };
}

export async function create(ctx: BrokerContext, p: z.infer<typeof createParams>): Promise<{ path: string }> {
  const { target, real } = await ctx.authorize(p.path, "write");
  const volume = await real.root.writerFor(ctx.server);
  if (p.type === "directory") await volume.mkdir(real.path);
  else await volume.writeFile(real.path, new Uint8Array(0), { op: "create", expectSha256: null });
  return { path: ctx.display(target) };
}

export async function remove(ctx: BrokerContext, p: z.infer<typeof deleteParams>): Promise<{ path: string }> {
  const { target, real } = await ctx.authorize(p.path, "write", true);
  if (target.path === ROOT || real.path === ROOT) {
    throw new AfsError("PERMISSION_DENIED", `${ctx.display(target)} is a root; a root itself is never deleted`);
  }
  await (await real.root.writerFor(ctx.server)).remove(real.path, { recursive: p.recursive === true });
  return { path: ctx.display(target) };
}

export async function rename(ctx: BrokerContext, p: z.infer<typeof renameParams>): Promise<{ path: string }> {
  const from = await ctx.authorize(p.oldPath, "write", true);
  const to = await ctx.authorize(p.newPath, "write", true);
  ctx.note.path = ctx.display(from.target);
  ctx.note.newPath = ctx.display(to.target);
  if (from.real.root !== to.real.root) {
    throw new AfsError("INVALID_ARGUMENT", "files/rename works within one root; copy across roots with read and write");
  }
  if (from.real.path === ROOT || to.real.path === ROOT) {
    throw new AfsError("PERMISSION_DENIED", "a root itself is never renamed");
  }
  await (await from.real.root.writerFor(ctx.server)).rename(from.real.path, to.real.path, {});
  return { path: ctx.display(to.target) };
}
