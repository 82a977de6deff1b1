// What every Store checks of a workspace dump before importing it, so a malformed dump is refused
// the same way by each of them and nothing is written.
import { AfsError } from "../core/errors.js";
import type { WorkspaceDump, WorkspaceRecord } from "./store.js";

export function checkDump(dump: WorkspaceDump): WorkspaceRecord {
  const ws = dump.workspace;
  const bad = (why: string): AfsError =>
    new AfsError("INVALID_ARGUMENT", `cannot import workspace ${ws.name}: ${why}`, { workspace: ws.name });
  if (!dump.checkpoints.some((cp) => cp.id === ws.head)) throw bad(`its head checkpoint ${ws.head} is not in the dump`);
  const other = dump.checkpoints.find((cp) => cp.workspace !== ws.name);
  if (other) throw bad(`checkpoint ${other.id} belongs to ${other.workspace}`);
  let last = 0;
  for (const e of dump.events) {
    if (e.workspace !== ws.name) throw bad(`event ${e.seq} belongs to ${e.workspace}`);
    if (!Number.isSafeInteger(e.seq) || e.seq <= last) throw bad(`event sequence numbers must increase (at ${e.seq})`);
    last = e.seq;
  }
  if (last > ws.revision) throw bad(`event ${last} is newer than its revision ${ws.revision}`);
  return ws;
}
