// Public surface `afs/acp`: afs as the filesystem of an Agent Client Protocol client (AcpClient over
// any stream, AcpFiles with editor buffers and a change log, approval policy, limits). Every module
// not exported through package.json `exports` may change at any time.
export { ndJsonStream, type Stream } from "@agentclientprotocol/sdk";
export {
  APPROVAL_MODES,
  type ApprovalDecision,
  type ApprovalMode,
  type ApprovalRequest,
  Approvals,
  type AskPerson,
  parseApprovalMode,
} from "../access/approvals.js";
export { DEFAULT_LIMITS, type Limits, resolveLimits } from "../access/limits.js";
export type { EditorBuffers } from "../protocols/acp/buffers.js";
export type { ChangedFile, ChangeTracker, WriteEvent } from "../protocols/acp/changes.js";
export { AcpClient, type AcpClientOptions, type SessionOptions } from "../protocols/acp/client.js";
export {
  AcpFiles,
  type AcpFilesOptions,
  type ReadParams,
  type ToolCallNote,
  type WriteParams,
} from "../protocols/acp/files.js";
export type { VolumeOpener } from "../protocols/acp/roots.js";
