// How the Redis store's records sit in Redis values (workspace hash fields, checkpoint and overlay
// JSON, stream entries), and how a workspace script's refusal becomes the contract's AfsError
// (store-errors.ts, the same one SQLite raises).
import type { Entry } from "../../core/entry.js";
import { AfsError } from "../../core/errors.js";
import { UNKNOWN_SURFACE } from "../../core/event.js";
import type { Hash } from "../../core/hash.js";
import type { CheckpointRecord, EventInput, EventRecord, WorkspaceRecord } from "../store.js";
import {
  checkpointIdTaken,
  checkpointNameTaken,
  noSuchHead,
  noWorkspace,
  revisionMoved,
  workspaceExists,
} from "../store-errors.js";
import { arr, fields, num, str } from "./client.js";
import type { Reply } from "./connect.js";

/** Checkpoints as stored: the record plus the revision it was recorded at (the insertion order). */
export type StoredCheckpoint = CheckpointRecord & { at: number };

export const isOk = (reply: Reply): boolean => str(arr(reply)[0] ?? null) === "OK";

/** A workspace script's reply as its value, or the AfsError SQLite raises for the same failure. */
export function scriptValue(
  reply: Reply,
  {
    workspace,
    cp = null,
    expected,
    head,
  }: { workspace: string; cp?: CheckpointRecord | null; expected?: number; head?: string },
): number {
  const [status, detail] = arr(reply);
  const code = str(status ?? null);
  if (code === "OK") return num(detail ?? null) ?? 0;
  switch (code) {
    case "NOT_FOUND":
      throw noWorkspace(workspace);
    case "CONFLICT":
      throw revisionMoved(workspace, expected, num(detail ?? null));
    case "LOG_AHEAD":
      throw new AfsError(
        "IO_ERROR",
        `the event log of workspace ${workspace} is ahead of its revision (last event ${str(detail ?? null)}); run afs fsck`,
        { workspace },
      );
    case "EXISTS":
      throw workspaceExists(workspace);
    case "ID_TAKEN":
      throw checkpointIdTaken(cp);
    case "NAME_TAKEN":
      throw checkpointNameTaken(workspace, cp);
    case "NO_TARGET":
      throw noSuchHead(workspace, head);
    default:
      throw new AfsError("INTERNAL", `unexpected reply from a store script: ${code}`);
  }
}

export function toWorkspace(f: Map<string, string>): WorkspaceRecord | null {
  if (!f.has("revision")) return null;
  return {
    name: f.get("name") ?? "",
    description: f.get("description") ?? "",
    head: f.get("head") ?? "",
    revision: Number(f.get("revision")),
    createdAt: Number(f.get("createdAt")),
    updatedAt: Number(f.get("updatedAt")),
  };
}

export function storedCheckpoint(cp: CheckpointRecord, at: number): string {
  return JSON.stringify({ ...toCheckpoint(cp as StoredCheckpoint), at });
}

export const parseCheckpoint = (v: string): StoredCheckpoint => JSON.parse(v) as StoredCheckpoint;

export function toCheckpoint(cp: CheckpointRecord): CheckpointRecord {
  return {
    id: cp.id,
    workspace: cp.workspace,
    name: cp.name,
    root: cp.root,
    parent: cp.parent,
    createdAt: cp.createdAt,
    actor: cp.actor,
    kind: cp.kind,
    description: cp.description,
  };
}

/** Overlay values: [kind, hash, size, mode, mtime] as JSON, or "" for a deletion. */
export function entryValue(e: Entry | null): string {
  return e ? JSON.stringify([e.kind, e.hash, e.size, e.mode, e.mtime]) : "";
}

export function toEntry(v: string): Entry | null {
  if (v === "") return null;
  const [kind, hash, size, mode, mtime] = JSON.parse(v) as [Entry["kind"], Hash, number, number, number];
  return { kind, hash, size: size ?? 0, mode: mode ?? 0, mtime: mtime ?? 0 };
}

export const eventArgs = (e: EventInput): string[] => [
  e.op,
  e.path,
  e.oldHash ?? "",
  e.newHash ?? "",
  e.actor,
  e.surface,
];

/** A stream entry [id, [field, value, …]] as an event; its seq is the id's first part. */
export function toEvent(workspace: string, entry: Reply): EventRecord {
  const [id, values] = arr(entry);
  const f = fields(values ?? null);
  const hash = (k: string): Hash | null => (f.get(k) ? (f.get(k) as Hash) : null);
  return {
    workspace,
    seq: Number((str(id ?? null) ?? "").split("-")[0]),
    op: f.get("op") ?? "",
    path: f.get("path") ?? "",
    oldHash: hash("old"),
    newHash: hash("new"),
    actor: f.get("actor") ?? "",
    surface: f.get("surface") || UNKNOWN_SURFACE,
    time: Number(f.get("time")),
  };
}
