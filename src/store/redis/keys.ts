// Where the Redis store keeps everything: one place that names every key, so the layout below is
// the whole truth. Every key of one workspace shares the hash tag `{ws:<name>}`, so each of its
// Lua scripts touches a single Redis Cluster slot; content-addressed objects are global, each
// object's keys sharing their own tag, and may live on any slot.
//
//   <p>:{ws:<n>}:meta   HASH  name, description, head, revision, createdAt, updatedAt
//   <p>:{ws:<n>}:cp     HASH  checkpoint id → JSON record (plus `at`, the revision it was made at)
//   <p>:{ws:<n>}:cpname HASH  checkpoint name → id
//   <p>:{ws:<n>}:ov     HASH  overlay path → JSON [kind, hash, size, mode, mtime], "" for a deletion
//   <p>:{ws:<n>}:ovp    ZSET  overlay paths, all score 0: ZRANGEBYLEX finds a subtree
//   <p>:{ws:<n>}:ovc    ZSET  "<parent>\0<path>", all score 0: ZRANGEBYLEX finds a directory's children
//   <p>:{ws:<n>}:ev     STREAM events, id "<seq>-0", never trimmed
//   <p>:{ws:<n>}:evp    ZSET  "<path>\0<seq, 16 digits>", all score 0: one path's events, newest
//                             first by ZREVRANGEBYLEX (meta field evp=1 once it covers the whole stream)
//   <p>:workspaces      ZSET  workspace names (global index; readers skip names whose meta is gone)
//   <p>:cpid            HASH  checkpoint id → workspace name (global index, filtered the same way)
//   <p>:{b:<h>}         HASH  blob: s size, t created ms, d bytes (blob-codec) or, when chunked,
//                             n chunk count and cb chunk size
//   <p>:{b:<h>}:l       LIST  a chunked blob's chunk hashes in order (chunk i starts at i·cb)
//   <p>:{b:<h>}:draft:<id> LIST a layout being written, renamed to :l by one script (expires in 1 h)
//   <p>:{c:<h>}         HASH  chunk: s size, t last stored ms (a re-put refreshes it), d bytes
//   <p>:{t:<h>}         HASH  tree: s size, t created ms, d bytes
//   <p>:blobs, <p>:trees, <p>:chunks   ZSET  object hashes (score 0), for listing and gc
//   <p>:{tpl}           HASH  template slug → workspace name (global; readers skip names whose meta is gone)
//   <p>:{tpl}:ws        HASH  workspace name → its template slug (the same slot: one script keeps
//                             the two in step and a slug held by one workspace at most)
//   <p>:{tokens}        HASH  token id → JSON record (plus `n`, its insertion number)
//   <p>:{tokens}:seq    STRING the last token insertion number
//   <p>:{tokens}:revoked HASH token id → first revocation time
//   <p>:{approvals}     HASH  approval id → "<insertion number>:<createdAt>:<request JSON>"
//   <p>:{approvals}:seq STRING the last approval insertion number
//   <p>:{approvals}:decision HASH approval id → decision JSON (HSETNX: the first one stands)
//   <p>:{approvals}:revoked  HASH approval id → first revocation time of its grant
//
// Workspace names are escaped (% { } as %XX) so no name can end or split the hash tag.

import { AfsError } from "../../core/errors.js";

/** The keys of one workspace, in the order every workspace script takes them as KEYS. */
export const WORKSPACE_KEYS = ["meta", "cp", "cpname", "ov", "ovp", "ovc", "ev", "evp"] as const;
export type WorkspaceKey = (typeof WORKSPACE_KEYS)[number];

export type ObjectKind = "blob" | "tree";

export class Keys {
  constructor(readonly prefix: string) {
    if (/[{}]/.test(prefix)) {
      throw new AfsError("INVALID_ARGUMENT", `a key prefix cannot hold { or } (they delimit hash tags): ${prefix}`);
    }
  }

  /** All of one workspace's keys, in WORKSPACE_KEYS order. */
  workspace(name: string): string[] {
    const tag = `${this.prefix}:{ws:${escapeTag(name)}}`;
    return WORKSPACE_KEYS.map((k) => `${tag}:${k}`);
  }

  ws(name: string, key: WorkspaceKey): string {
    return `${this.prefix}:{ws:${escapeTag(name)}}:${key}`;
  }

  get workspaces(): string {
    return `${this.prefix}:workspaces`;
  }

  get checkpointIds(): string {
    return `${this.prefix}:cpid`;
  }

  object(kind: ObjectKind, hash: string): string {
    return `${this.prefix}:{${kind === "blob" ? "b" : "t"}:${hash}}`;
  }

  layout(hash: string): string {
    return `${this.object("blob", hash)}:l`;
  }

  /** A temporary list a chunked blob's layout is built in before it is renamed into place. */
  layoutDraft(hash: string, id: string): string {
    return `${this.object("blob", hash)}:draft:${id}`;
  }

  chunk(hash: string): string {
    return `${this.prefix}:{c:${hash}}`;
  }

  index(kind: ObjectKind | "chunk"): string {
    return `${this.prefix}:${kind}s`;
  }

  get templates(): string {
    return `${this.prefix}:{tpl}`;
  }

  get templateMarks(): string {
    return `${this.prefix}:{tpl}:ws`;
  }

  get tokens(): string {
    return `${this.prefix}:{tokens}`;
  }

  get tokenSeq(): string {
    return `${this.prefix}:{tokens}:seq`;
  }

  get tokenRevocations(): string {
    return `${this.prefix}:{tokens}:revoked`;
  }

  /** The approval keys, in the order the approval scripts take them: requests, seq, decisions, revocations. */
  get approvals(): { requests: string; seq: string; decisions: string; revocations: string } {
    const tag = `${this.prefix}:{approvals}`;
    return { requests: tag, seq: `${tag}:seq`, decisions: `${tag}:decision`, revocations: `${tag}:revoked` };
  }
}

/** Escapes the characters that would end or split a hash tag (and the escape itself). */
export function escapeTag(name: string): string {
  return name.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}
