// resources/read: one file of a workspace (live) or of a checkpoint, as UTF-8 text or a base64
// blob, with its type, size and sha256. Whole files only, within the session's read limit.
import { checkWholeRead } from "../../../access/limits.js";
import { decodeText } from "../../../core/text.js";
import { withOpenFile } from "../../../volume/volume.js";
import { authorize, CACHE, type CacheHint, type ResourceContext } from "./context.js";
import { mimeTypeOf } from "./mime.js";
import type { ResourceAddress } from "./uri.js";

/** Where a too-large file can still be read: in ranges, through the tool that does it. */
const RANGED = "the file_lines tool reads it in ranges";

export interface ResourceMeta {
  "afs/sha256": string;
  "afs/size": number;
  /** The checkpoint read, for an afs://WORKSPACE@CHECKPOINT/… URI. */
  "afs/checkpoint"?: string;
}

/** One file's contents: `text` for UTF-8 text, else `blob` (base64). */
export type ResourceContents = { uri: string; mimeType: string; _meta: ResourceMeta } & (
  | { text: string }
  | { blob: string }
);

export interface ResourceRead {
  contents: [ResourceContents];
  /** The file's size in bytes (also in `_meta`), for a layer that reports it elsewhere. */
  size: number;
  cache: CacheHint;
}

export async function readResource(ctx: ResourceContext, uri: string): Promise<ResourceRead> {
  const address = await authorize(ctx, uri);
  const { data, sha256 } = address.checkpoint === null ? await live(ctx, address) : await atCheckpoint(ctx, address);
  const text = decodeText(data);
  const meta: ResourceMeta = { "afs/sha256": sha256, "afs/size": data.length };
  if (address.checkpoint !== null) meta["afs/checkpoint"] = address.checkpoint;
  const mimeType = mimeTypeOf(address.path, text !== null);
  const body = text === null ? { blob: data.toString("base64") } : { text };
  return {
    contents: [{ uri, mimeType, ...body, _meta: meta }],
    size: data.length,
    cache: address.checkpoint === null ? CACHE.live : CACHE.checkpoint,
  };
}

/** The live file (symlinks followed inside the workspace), refused by size before any byte is read. */
async function live(ctx: ResourceContext, a: ResourceAddress): Promise<{ data: Buffer; sha256: string }> {
  const volume = await ctx.afs.workspaces.volume(a.workspace);
  return withOpenFile(volume, a.path, async (file) => {
    checkWholeRead(ctx.limits, a.path, file.size, RANGED);
    const data = file.size === 0 ? Buffer.alloc(0) : await file.read(0, file.size);
    return { data, sha256: await file.hash() };
  });
}

/**
 * The file as the checkpoint holds it. The checkpoint must exist by that name (a version id is not
 * a checkpoint here); the engine reads the content whole, so the limit applies after the read.
 */
async function atCheckpoint(ctx: ResourceContext, a: ResourceAddress): Promise<{ data: Buffer; sha256: string }> {
  const checkpoint = a.checkpoint as string;
  await ctx.afs.checkpoints.get(a.workspace, checkpoint);
  const version = await ctx.afs.history.read(a.workspace, a.path, checkpoint);
  checkWholeRead(ctx.limits, a.path, version.size, RANGED);
  return { data: version.data, sha256: version.sha256 };
}
