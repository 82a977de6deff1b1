// What an ACP session changed: every write is an event (session, agent, tool call when known), kept
// in a bounded log, and each file's text before the session's first write is kept so the host can
// ask for the session's changed files and their unified diffs at any time.
import type { Hash } from "../../core/hash.js";
import { unifiedPatch } from "../../core/unified-diff.js";
import { EventLog } from "../../volume/event-log.js";

export interface WriteEvent {
  seq: number;
  session: string;
  agent: string;
  /** The tool call the write carried out, when the agent announced one for the path. */
  toolCallId?: string;
  /** Host path. */
  path: string;
  oldHash: Hash | null;
  newHash: Hash;
  /** "disk" for a file written, "buffer" for an open editor buffer updated instead. */
  target: "disk" | "buffer";
  time: number;
}

export interface ChangedFile {
  path: string;
  /** False when the file did not exist before the session wrote it. */
  existed: boolean;
  patch: string;
}

export class ChangeTracker {
  private readonly log: EventLog<WriteEvent>;
  /** session → host path → the text before the session first wrote it (null: it did not exist). */
  private readonly originals = new Map<string, Map<string, string | null>>();

  constructor(maxEvents?: number) {
    this.log = new EventLog<WriteEvent>(maxEvents === undefined ? {} : { maxEvents });
  }

  record(event: Omit<WriteEvent, "seq" | "time">, before: string | null): number {
    const seq = this.log.append({ ...event, time: Date.now() });
    const files = this.originals.get(event.session) ?? new Map<string, string | null>();
    if (!files.has(event.path)) files.set(event.path, before);
    this.originals.set(event.session, files);
    return seq;
  }

  /** Write events after `afterSeq` (the newest ones only, once the log has dropped older ones). */
  events(afterSeq = 0): WriteEvent[] {
    return this.log.events(afterSeq);
  }

  /** Host paths the session wrote, in the order first written. */
  paths(session: string): string[] {
    return [...(this.originals.get(session)?.keys() ?? [])];
  }

  /** The session's changed files with a diff from before its first write to `current` text now. */
  async changedFiles(session: string, current: (path: string) => Promise<string | null>): Promise<ChangedFile[]> {
    const out: ChangedFile[] = [];
    for (const [path, before] of this.originals.get(session) ?? []) {
      const after = await current(path);
      if (after === before) continue;
      out.push({ path, existed: before !== null, patch: unifiedPatch(path, before, after) });
    }
    return out;
  }

  forget(session: string): void {
    this.originals.delete(session);
  }
}
