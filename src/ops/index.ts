// Every file operation, each with its zod argument schema: the one implementation that the MCP
// tools, the CLI and the other protocols call.

export type { EntryItem } from "./common.js";
export { type CreateExclusiveArgs, createExclusive, createExclusiveArgs } from "./create-exclusive.js";
export { type DeleteArgs, deleteArgs, remove } from "./delete.js";
export { type DeleteLinesArgs, type DeleteLinesResult, deleteLines, deleteLinesArgs } from "./delete-lines.js";
export { type GlobArgs, type GlobResult, glob, globArgs } from "./glob.js";
export {
  type GrepArgs,
  type GrepItems,
  type GrepMatch,
  type GrepOptions,
  type GrepResult,
  grep,
  grepArgs,
} from "./grep.js";
export { grepText } from "./grep-text.js";
export { type InsertArgs, type InsertResult, insert, insertArgs } from "./insert.js";
export { type LinesArgs, type LinesResult, lines, linesArgs } from "./lines.js";
export { type ListArgs, type ListResult, list, listArgs } from "./list.js";
export { type MkdirArgs, mkdir, mkdirArgs } from "./mkdir.js";
export { type PatchArgs, type PatchItem, type PatchResult, patch, patchArgs } from "./patch.js";
export {
  type QueryArgs,
  type QueryExplain,
  type QueryHit,
  type QueryOptions,
  type QueryResult,
  query,
  queryArgs,
} from "./query.js";
export { type ReadArgs, type ReadResult, read, readArgs } from "./read.js";
export { type RenameArgs, rename, renameArgs } from "./rename.js";
export { type ReplaceArgs, type ReplaceResult, replace, replaceArgs } from "./replace.js";
export { type WriteArgs, write, writeArgs } from "./write.js";
