// Workspace files as MCP resources, revision-neutral: plain functions over the engine and a session
// (ResourceContext) that each revision's server registers in a few lines. Results carry no
// revision-specific fields; `cache` is data a 2026-07-28 layer spreads in as ttlMs/cacheScope.
// Errors are AfsErrors; rpcError (../errors.ts) turns them into the one JSON-RPC error to send.
export { CACHE, type CacheHint, RESOURCE_ACCESS, type ResourceContext } from "./context.js";
export { DEFAULT_PAGE_SIZE, listResources, type ResourceEntry, type ResourceList } from "./list.js";
export { type ResourceContents, type ResourceRead, readResource } from "./read.js";
export { parseResourceUri, RESOURCE_TEMPLATES, type ResourceAddress, resourceUri } from "./uri.js";
export { ResourceWatch, type WatchHandlers, watchResources } from "./watch.js";

import { CACHE } from "./context.js";
import { RESOURCE_TEMPLATES } from "./uri.js";

/** resources/templates/list: the same for every session. */
export const listResourceTemplates = () => ({ resourceTemplates: [...RESOURCE_TEMPLATES], cache: CACHE.templates });
