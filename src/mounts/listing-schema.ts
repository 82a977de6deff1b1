// The schema of a mount's listing, for MCP's afs_status output; checked against MountListing, so
// the two cannot drift.
import { z } from "zod";
import type { MountListing } from "./live.js";

export const mountListing = z.object({
  workspace: z.string(),
  dir: z.string(),
  state: z.enum(["starting", "running", "error", "stopped"]),
  readonly: z.boolean(),
  pid: z.number().nullable().describe("The sync process's id while it runs."),
  pending: z.number().describe("Changed paths waiting for the next sync round."),
  conflicts: z.number().describe("Paths changed on both sides, over every run of this mount (both versions kept)."),
  last_sync: z.string().nullable().describe("When the last sync round ended (ISO time)."),
  last_error: z.string().nullable(),
}) satisfies z.ZodType<MountListing>;
