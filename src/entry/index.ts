// Public surface `afs`: the engine, the file operations with their zod argument schemas, and AfsError
// with its codes. Hosts and tools import only the package's entry points (package.json `exports`);
// every other module may change at any time.
export { AfsError, ERROR_CODES, type ErrorCode, isAfsError } from "../core/errors.js";
export type { Env, Settings } from "../core/settings.js";
export { Mount, type MountOptions, type MountRunState, type MountStatus } from "../mounts/mount.js";
// The operations are listed once, in ops/index.ts: each one's function, argument schema and types.
export * from "../ops/index.js";
export type { SearchIndexes } from "../search/indexes.js";
export { type LocalDirOptions, LocalDirVolume } from "../volume/local-dir/local-dir-volume.js";
export type { MutationResult, OpenFile, Stat, Volume, WriteOptions } from "../volume/volume.js";
export {
  Afs,
  type AfsOptions,
  type DiffResult,
  type EventFilter,
  type EventFollower,
  type EventPage,
  type EventRecord,
  type ExportResult,
  type FileVersion,
  type RestoreResult,
  VERSION,
  type VersionContent,
  type VersionDiff,
  type VersioningPolicy,
  type VersionPage,
} from "../workspace/afs.js";
export type { CheckpointInfo, WorkspaceInfo } from "../workspace/info.js";
