// resources/list: the files of the session's workspace, in path order, a page at a time. The
// cursor names the last path handed out, so pages stay in step while files come and go.

import { AfsError } from "../../../core/errors.js";
import { baseName } from "../../../core/paths.js";
import { byString } from "../../../ops/common.js";
import type { Stat } from "../../../volume/volume.js";
import { CACHE, type CacheHint, listedWorkspace, type ResourceContext } from "./context.js";
import { mimeTypeByName } from "./mime.js";
import { resourceUri } from "./uri.js";

/** Files per page unless the caller asks for fewer; never more than the session's maxResults. */
export const DEFAULT_PAGE_SIZE = 100;

export interface ResourceEntry {
  uri: string;
  /** The file name; `title` carries the whole path. */
  name: string;
  title: string;
  mimeType?: string;
  size: number;
  annotations: { lastModified: string };
  _meta: { "afs/sha256": string };
}

export interface ResourceList {
  resources: ResourceEntry[];
  nextCursor?: string;
  cache: CacheHint;
}

// A workspace volume hands out the same walk array while nothing below changed; its sorted files
// are worked out once per array, not once per page.
const sortedFiles = new WeakMap<readonly Stat[], Stat[]>();

function filesOf(walk: readonly Stat[]): Stat[] {
  let files = sortedFiles.get(walk);
  if (!files) {
    files = walk.filter((s) => s.kind === "file").sort((a, b) => byString(a.path, b.path));
    sortedFiles.set(walk, files);
  }
  return files;
}

interface Cursor {
  w: string;
  after: string;
}

const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify(c)).toString("base64url");

function decodeCursor(cursor: string, workspace: string): string {
  let c: Partial<Cursor> | null = null;
  try {
    c = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<Cursor>;
  } catch {
    // Refused below.
  }
  if (!c || typeof c.after !== "string" || c.w !== workspace) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "the cursor is not one this listing handed out; list again from the start without a cursor",
      { cursor },
    );
  }
  return c.after;
}

/** First index whose path sorts after `after`. */
function firstAfter(files: readonly Stat[], after: string): number {
  let lo = 0;
  let hi = files.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((files[mid] as Stat).path <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export async function listResources(
  ctx: ResourceContext,
  cursor?: string,
  options: { pageSize?: number } = {},
): Promise<ResourceList> {
  const workspace = await listedWorkspace(ctx);
  if (workspace === null) return { resources: [], cache: CACHE.live };
  const after = cursor === undefined ? null : decodeCursor(cursor, workspace);
  const volume = await ctx.afs.workspaces.volume(workspace);
  const walk = volume.walkList ? await volume.walkList("/") : await collect(volume.walk("/"));
  const files = filesOf(walk);
  const size = Math.min(options.pageSize ?? DEFAULT_PAGE_SIZE, ctx.limits.maxResults);
  const start = after === null ? 0 : firstAfter(files, after);
  const page = files.slice(start, start + size);
  const resources = page.map((s) => entry(workspace, s));
  const last = page.at(-1);
  return last && start + size < files.length
    ? { resources, nextCursor: encodeCursor({ w: workspace, after: last.path }), cache: CACHE.live }
    : { resources, cache: CACHE.live };
}

function entry(workspace: string, s: Stat): ResourceEntry {
  const mimeType = mimeTypeByName(s.path);
  return {
    uri: resourceUri(workspace, s.path),
    name: baseName(s.path),
    title: s.path,
    ...(mimeType === undefined ? {} : { mimeType }),
    size: s.size,
    annotations: { lastModified: new Date(s.mtime).toISOString() },
    _meta: { "afs/sha256": s.sha256 ?? "" },
  };
}

async function collect(walk: AsyncIterable<Stat>): Promise<Stat[]> {
  const out: Stat[] = [];
  for await (const s of walk) out.push(s);
  return out;
}
