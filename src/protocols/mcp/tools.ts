// The MCP tool table: every tool afs offers, defined once. Servers filter it by transport and
// profile; `afs fs …` and the docs can read the same entries.
import { allows, type Profile } from "../../access/profiles.js";
import type { Tool, TransportKind } from "./tool.js";
import { adminTools } from "./tools/admin.js";
import { approvalTools } from "./tools/approvals.js";
import { checkpointTools } from "./tools/checkpoints.js";
import { fileReadTools } from "./tools/files-read.js";
import { fileWriteTools } from "./tools/files-write.js";
import { historyTools } from "./tools/history.js";
import { tokenTools } from "./tools/tokens.js";

export const TOOLS: readonly Tool[] = [
  ...adminTools,
  ...checkpointTools,
  ...fileReadTools,
  ...fileWriteTools,
  ...historyTools,
  ...tokenTools,
  ...approvalTools,
];

/** Tools a transport offers at all (before any profile). */
export const offeredBy = (transport: TransportKind): Tool[] =>
  TOOLS.filter((t) => t.transports === undefined || t.transports.includes(transport));

/** Tools a session lists and may call. */
export const allowedFor = (profile: Profile, transport: TransportKind): Tool[] =>
  offeredBy(transport).filter((t) => allows(profile, t));
