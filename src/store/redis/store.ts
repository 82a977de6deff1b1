// The Redis store: many afs processes on many machines share one Redis. Every multi-key change is
// one Lua script over one workspace's keys (keys.ts), checking the revision and every other
// precondition before its first write, so a lost race is CONFLICT and a failure changes nothing.

import type { Entry } from "../../core/entry.js";
import type { Hash } from "../../core/hash.js";
import type { Env } from "../../core/settings.js";
import type { ApprovalRecord } from "../approvals.js";
import type { StoreDriver } from "../checked-store.js";
import type { ByteRange } from "../chunking.js";
import { type OnRepackProgress, type RepackResult, repackValues } from "../repack.js";
import type {
  CheckpointRecord,
  Commit,
  EventFollower,
  EventRecord,
  HeadMove,
  NewBlob,
  OverlayRow,
  TemplateRecord,
  WorkspaceDump,
  WorkspaceRecord,
} from "../store.js";
import { deletingHead } from "../store-errors.js";
import type { TokenRecord } from "../tokens.js";
import { RedisApprovals } from "./approvals.js";
import { RedisBlobs } from "./blobs.js";
import { RedisChunks } from "./chunks.js";
import { arr, batched, fields, num, RedisLink, str } from "./client.js";
import { checkDurability, connect, parseRedisUrl, type Reply } from "./connect.js";
import { RedisFollowers } from "./follow.js";
import { Keys, type ObjectKind } from "./keys.js";
import {
  entryValue,
  eventArgs,
  isOk,
  parseCheckpoint,
  scriptValue,
  storedCheckpoint,
  toCheckpoint,
  toEntry,
  toEvent,
  toWorkspace,
} from "./records.js";
import { redisRepackTargets } from "./repack.js";
import * as scripts from "./scripts.js";
import { RedisTemplates } from "./templates.js";
import { RedisTokens } from "./tokens.js";

export interface RedisStoreOptions {
  /** Prefix of every key (default: the URL's ?prefix=, else "afs"), so several stores can share one database. */
  prefix?: string;
  /** Where the durability warning goes (default: one line on stderr). */
  warn?: (line: string) => void;
  /** The opener's settings: AFS_REDIS_PASSWORD for a URL without a password (default none). */
  env?: Env;
  /** How long one command waits for its reply before TIMEOUT (default 30 s). */
  commandTimeoutMs?: number;
}

/** What claimCheckpoint found: a problem for the script to refuse, and whether it added an index entry. */
interface Claim {
  problem: "" | "ID_TAKEN";
  added: boolean;
}

/** The Redis primitives; openStore wraps them in the contract's checks (checked-store.ts). */
/** Settings sit in the workspace's meta hash (so they go with it), apart from its own fields. */
const settingField = (key: string): string => `setting:${key}`;

export class RedisStore implements StoreDriver {
  readonly url: string;
  readonly chunkBytes: number;
  private readonly blobs: RedisBlobs;
  private readonly chunks: RedisChunks;
  private readonly tokens: RedisTokens;
  private readonly approvals: RedisApprovals;
  private readonly followers: RedisFollowers;
  private readonly templates: RedisTemplates;

  private constructor(
    private readonly link: RedisLink,
    private readonly keys: Keys,
  ) {
    this.url = link.target.shown;
    this.blobs = new RedisBlobs(link, keys);
    this.chunks = new RedisChunks(link, keys);
    this.chunkBytes = this.blobs.chunkBytes;
    this.tokens = new RedisTokens(link, keys);
    this.approvals = new RedisApprovals(link, keys);
    this.templates = new RedisTemplates(link, keys);
    this.followers = new RedisFollowers({
      // A blocking XREAD would hold up every command behind it: it gets a connection of its own.
      open: () => connect(link.target, { quiet: true }),
      unblock: async (id) => num(await link.read(["CLIENT", "UNBLOCK", String(id)])) ?? 0,
    });
  }

  /** Connects to the server of `url`; one IO_ERROR naming host and port when it cannot be reached. */
  static async open(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
    const target = parseRedisUrl(url, options.env);
    const keys = new Keys(options.prefix ?? target.prefix ?? "afs");
    const client = await connect(target);
    let link = new RedisLink(client, target, options.commandTimeoutMs);
    try {
      const info = str(await link.read(["INFO", "server"])) ?? "";
      const major = Number(/redis_version:(\d+)/.exec(info)?.[1] ?? "7");
      link = new RedisLink(client, target, options.commandTimeoutMs, major >= 7);
      await checkDurability(client, target, options.warn);
      // Loaded up front so the first calls go by SHA; after a server restart empties its script
      // cache, RedisLink.run loads them again on NOSCRIPT.
      const all = Object.values(scripts).filter((s): s is scripts.Script => s instanceof scripts.Script);
      await Promise.all(all.map((s) => link.write(["SCRIPT", "LOAD", link.sourceOf(s).source])));
    } catch (e) {
      await link.close();
      throw e;
    }
    return new RedisStore(link, keys);
  }

  close(): Promise<void> {
    this.followers.close();
    return this.link.close();
  }

  // --- objects -------------------------------------------------------------------------------

  putBlobs(blobs: ReadonlyArray<NewBlob>): Promise<void> {
    return this.blobs.put("blob", blobs);
  }

  putBlobStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }> {
    return this.blobs.putStream(source);
  }

  getBlob(hash: Hash): Promise<Buffer | null> {
    return this.blobs.read.get(hash);
  }

  blobSize(hash: Hash): Promise<number | null> {
    return this.blobs.read.size(hash);
  }

  readBlobRanges(hash: Hash, ranges: readonly ByteRange[]): Promise<Buffer[] | null> {
    return this.blobs.read.ranges(hash, ranges);
  }

  blobStream(hash: Hash): AsyncIterable<Buffer> {
    return this.blobs.read.stream(hash);
  }

  hasBlobs(hashes: readonly Hash[]): Promise<Set<Hash>> {
    return this.blobs.has(hashes);
  }

  putTrees(trees: ReadonlyArray<{ hash: Hash; data: Uint8Array }>): Promise<void> {
    return this.blobs.put("tree", trees);
  }

  getTree(hash: Hash): Promise<Buffer | null> {
    return this.blobs.getTree(hash);
  }

  // --- workspaces ----------------------------------------------------------------------------

  async createWorkspace(ws: WorkspaceRecord, initial: CheckpointRecord): Promise<void> {
    // The global indexes first (idempotent): an entry whose workspace or checkpoint never came to
    // be is skipped by every reader, while one written after could be lost with this process.
    const claim = await this.claimCheckpoint(ws.name, initial);
    const listed = (await this.link.write(["ZADD", this.keys.workspaces, "0", ws.name])) === 1;
    const reply = await this.runWs(ws.name, scripts.CREATE_WORKSPACE, [
      ws.name,
      ws.description,
      ws.head,
      String(ws.revision),
      String(ws.createdAt),
      String(ws.updatedAt),
      initial.id,
      initial.name,
      storedCheckpoint(initial, ws.revision),
      claim.problem,
    ]);
    if (!isOk(reply)) {
      // Undo what this call added to the indexes, so a refused create leaves every key as it was.
      await this.unclaim(ws.name, initial, claim);
      await this.unlist(ws.name, listed);
    }
    scriptValue(reply, { workspace: ws.name, cp: initial });
    await this.templates.dropLeftover(ws.name);
  }

  async getWorkspace(name: string): Promise<WorkspaceRecord | null> {
    return toWorkspace(fields(await this.link.read(["HGETALL", this.keys.ws(name, "meta")])));
  }

  async listWorkspaces(): Promise<WorkspaceRecord[]> {
    const names = arr(await this.link.read(["ZRANGE", this.keys.workspaces, "0", "-1"])).map((n) => str(n) ?? "");
    const records = await Promise.all(names.map((n) => this.getWorkspace(n)));
    // ZRANGE of equal scores is bytewise, like SQLite's ORDER BY name.
    return records.filter((r): r is WorkspaceRecord => r !== null);
  }

  async deleteWorkspace(name: string): Promise<boolean> {
    const reply = arr(await this.runWs(name, scripts.DELETE_WORKSPACE, []));
    if (reply[1] !== 1) return false;
    // The template mark after the script too (it lives in another slot). Until it goes, readers
    // skip it because its workspace is gone, and setTemplate refuses the name (NOT_FOUND); a crash
    // in between leaves a mark nobody sees, which a later create of the name drops.
    await this.templates.unmark(name);
    // The indexes after the script: a crash in between leaves entries readers skip. A create of
    // the same name racing this ZREM is put back by the existence check that follows it.
    const ids = arr(reply[2] ?? null).map((id) => str(id) ?? "");
    if (ids.length > 0) await this.link.write(["HDEL", this.keys.checkpointIds, ...ids]);
    await this.link.write(["ZREM", this.keys.workspaces, name]);
    if ((await this.link.read(["EXISTS", this.keys.ws(name, "meta")])) === 1) {
      await this.link.write(["ZADD", this.keys.workspaces, "0", name]);
    }
    return true;
  }

  async importWorkspace(dump: WorkspaceDump): Promise<void> {
    const ws = dump.workspace;
    // The indexes first, as createWorkspace does; taken back below when the script refuses.
    const claims = await batched(dump.checkpoints, (cp) => this.claimCheckpoint(ws.name, cp));
    const taken = dump.checkpoints.find((_, i) => claims[i]?.problem === "ID_TAKEN");
    const listed = (await this.link.write(["ZADD", this.keys.workspaces, "0", ws.name])) === 1;
    const args: string[] = [
      taken?.id ?? "",
      ws.name,
      ws.description,
      ws.head,
      String(ws.revision),
      String(ws.createdAt),
      String(ws.updatedAt),
      String(dump.checkpoints.length),
    ];
    // `at` keeps the dump's order among checkpoints made in the same millisecond (it lists newest
    // first); checkpoints made after the import get revisions above all of them.
    dump.checkpoints.forEach((cp, i) => {
      args.push(cp.id, cp.name, storedCheckpoint(cp, ws.revision - i));
    });
    args.push(String(dump.overlay.length));
    for (const row of dump.overlay) args.push(row.path, entryValue(row.entry));
    args.push(String(dump.events.length));
    for (const e of dump.events) args.push(String(e.seq), ...eventArgs(e), String(e.time));
    const reply = await this.runWs(ws.name, scripts.IMPORT_WORKSPACE, args);
    if (!isOk(reply)) {
      await Promise.all(dump.checkpoints.map((cp, i) => this.unclaim(ws.name, cp, claims[i] as Claim)));
      await this.unlist(ws.name, listed);
    }
    const detail = str(arr(reply)[1] ?? null);
    const cp = dump.checkpoints.find((c) => c.id === detail || c.name === detail) ?? null;
    scriptValue(reply, { workspace: ws.name, cp });
    await this.templates.dropLeftover(ws.name);
  }

  // --- templates -----------------------------------------------------------------------------

  setTemplate(workspace: string, slug: string | null): Promise<void> {
    return this.templates.set(workspace, slug);
  }

  listTemplates(): Promise<TemplateRecord[]> {
    return this.templates.list();
  }

  // --- overlay -------------------------------------------------------------------------------

  async overlayGet(workspace: string, paths: readonly string[]): Promise<Map<string, Entry | null>> {
    const values = arr(await this.link.read(["HMGET", this.keys.ws(workspace, "ov"), ...paths]));
    const out = new Map<string, Entry | null>();
    paths.forEach((path, i) => {
      const v = str(values[i] ?? null);
      if (v !== null) out.set(path, toEntry(v));
    });
    return out;
  }

  async overlayUnder(workspace: string, dir: string, childrenOnly = false): Promise<OverlayRow[]> {
    const prefix = dir === "/" ? "/" : `${dir}/`;
    const upper = `${prefix.slice(0, -1)}0`;
    const flat = arr(
      await this.runWs(
        workspace,
        scripts.OVERLAY_UNDER,
        [`(${prefix}`, `(${upper}`, childrenOnly ? "1" : "0", dir],
        true,
      ),
    );
    const rows: OverlayRow[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      rows.push({ path: str(flat[i] ?? null) ?? "", entry: toEntry(str(flat[i + 1] ?? null) ?? "") });
    }
    return rows;
  }

  async overlayCount(workspace: string): Promise<number> {
    return num(await this.link.read(["HLEN", this.keys.ws(workspace, "ov")])) ?? 0;
  }

  async commit(workspace: string, commit: Commit): Promise<number> {
    const args: string[] = [String(commit.expectRevision), String(Date.now())];
    const clear = commit.clearUnder ?? [];
    args.push(String(clear.length));
    for (const dir of clear) {
      const prefix = dir === "/" ? "/" : `${dir}/`;
      args.push(`(${prefix}`, `(${prefix.slice(0, -1)}0`);
    }
    args.push(String(commit.set.length));
    for (const row of commit.set) args.push(row.path, entryValue(row.entry));
    args.push(String(commit.events.length));
    for (const e of commit.events) args.push(...eventArgs(e));
    return scriptValue(await this.runWs(workspace, scripts.COMMIT, args), {
      workspace,
      expected: commit.expectRevision,
    });
  }

  async moveHead(workspace: string, move: HeadMove): Promise<number> {
    const cp = move.checkpoint;
    const claim: Claim = cp ? await this.claimCheckpoint(workspace, cp) : { problem: "", added: false };
    const reply = await this.runWs(workspace, scripts.MOVE_HEAD, [
      String(move.expectRevision),
      String(Date.now()),
      move.head,
      move.clearOverlay ? "1" : "0",
      cp?.id ?? "",
      cp?.name ?? "",
      cp ? storedCheckpoint(cp, move.expectRevision + 1) : "",
      claim.problem,
      ...eventArgs(move.event),
    ]);
    if (cp && !isOk(reply)) await this.unclaim(workspace, cp, claim);
    return scriptValue(reply, { workspace, cp, expected: move.expectRevision, head: move.head });
  }

  // --- checkpoints and events ----------------------------------------------------------------

  async getCheckpoint(workspace: string, nameOrId: string): Promise<CheckpointRecord | null> {
    const id = str(await this.link.read(["HGET", this.keys.ws(workspace, "cpname"), nameOrId]));
    if (id !== null) {
      const byName = await this.checkpointIn(workspace, id);
      if (byName) return byName;
    }
    return this.checkpointIn(workspace, nameOrId);
  }

  async getCheckpointById(id: string): Promise<CheckpointRecord | null> {
    const workspace = str(await this.link.read(["HGET", this.keys.checkpointIds, id]));
    return workspace === null ? null : this.checkpointIn(workspace, id);
  }

  async listCheckpoints(workspace: string): Promise<CheckpointRecord[]> {
    const all = arr(await this.link.read(["HVALS", this.keys.ws(workspace, "cp")])).map((v) =>
      parseCheckpoint(str(v) ?? ""),
    );
    // Like SQLite's ORDER BY created_at DESC, rowid DESC: the revision recorded at stands for the rowid.
    all.sort((a, b) => b.createdAt - a.createdAt || b.at - a.at);
    return all.map(toCheckpoint);
  }

  async deleteCheckpoint(workspace: string, id: string): Promise<boolean> {
    const reply = arr(await this.runWs(workspace, scripts.DELETE_CHECKPOINT, [id]));
    if (str(reply[0] ?? null) === "CONFLICT") throw deletingHead(workspace, id);
    if (reply[1] !== 1) return false;
    await this.link.write(["HDEL", this.keys.checkpointIds, id]);
    return true;
  }

  async listEvents(workspace: string, afterSeq: number, limit: number): Promise<EventRecord[]> {
    const count = limit > 0 ? ["COUNT", String(limit)] : [];
    const start = `${Math.max(0, Math.floor(afterSeq)) + 1}-0`;
    const entries = arr(await this.link.read(["XRANGE", this.keys.ws(workspace, "ev"), start, "+", ...count]));
    return entries.map((entry) => toEvent(workspace, entry));
  }

  async getWorkspaceSetting(workspace: string, key: string): Promise<string | null> {
    return str(await this.link.read(["HGET", this.keys.ws(workspace, "meta"), settingField(key)]));
  }

  async setWorkspaceSetting(workspace: string, key: string, value: string | null): Promise<void> {
    const reply = await this.runWs(workspace, scripts.SET_SETTING, [
      settingField(key),
      value ?? "",
      value === null ? "0" : "1",
    ]);
    scriptValue(reply, { workspace });
  }

  async listPathEvents(
    workspace: string,
    path: string,
    beforeSeq: number | null,
    limit: number,
  ): Promise<EventRecord[]> {
    // "" reads from the newest.
    const before = beforeSeq === null ? "" : String(beforeSeq);
    for (;;) {
      const [status, entries] = arr(
        await this.runWs(workspace, scripts.PATH_EVENTS, [path, before, String(Math.max(0, limit))], true),
      );
      if (str(status ?? null) === "OK") return arr(entries ?? null).map((entry) => toEvent(workspace, entry));
      if (!(await this.link.read(["EXISTS", this.keys.ws(workspace, "meta")]))) return [];
      await this.indexEvents(workspace);
    }
  }

  /** Builds the per-path index of a workspace made before it existed, once, a batch per script. */
  private async indexEvents(workspace: string): Promise<void> {
    let after = 0;
    do {
      after = Number(await this.runWs(workspace, scripts.INDEX_EVENTS, [String(after), "1000"]));
    } while (after > 0);
  }

  followEvents(
    workspace: string,
    afterSeq: number,
    onEvents: (events: EventRecord[]) => Promise<void> | void,
  ): EventFollower {
    return this.followers.follow(
      this.keys.ws(workspace, "ev"),
      afterSeq,
      (after, limit) => this.listEvents(workspace, after, limit),
      onEvents,
    );
  }

  // --- garbage collection and integrity --------------------------------------------------------

  async gcRoots(): Promise<{ trees: Set<Hash>; blobs: Set<Hash> }> {
    const trees = new Set<Hash>();
    const blobs = new Set<Hash>();
    for (const ws of await this.listWorkspaces()) {
      for (const cp of await this.listCheckpoints(ws.name)) trees.add(cp.root);
      for (const v of arr(await this.link.read(["HVALS", this.keys.ws(ws.name, "ov")]))) {
        const e = toEntry(str(v) ?? "");
        if (e) (e.kind === "dir" ? trees : blobs).add(e.hash);
      }
    }
    return { trees, blobs };
  }

  listObjects(kind: ObjectKind): AsyncIterable<{ hash: Hash; createdAt: number; size: number }> {
    return this.blobs.list(kind);
  }

  async deleteObjects(kind: ObjectKind, hashes: readonly Hash[]): Promise<number> {
    return this.blobs.delete(kind, hashes);
  }

  repack(onProgress?: OnRepackProgress): Promise<RepackResult> {
    return repackValues(redisRepackTargets(this.link, this.keys), onProgress);
  }

  sweepChunks(createdBefore: number): Promise<{ deleted: number; bytes: number }> {
    return this.chunks.sweep(createdBefore);
  }

  async checkIntegrity(): Promise<string[]> {
    const problems: string[] = [];
    const exists = async (kind: ObjectKind, hash: Hash) =>
      (await this.link.read(["EXISTS", this.keys.object(kind, hash)])) === 1;
    for (const ws of await this.listWorkspaces()) {
      const checkpoints = await this.listCheckpoints(ws.name);
      if (!checkpoints.some((cp) => cp.id === ws.head)) {
        problems.push(`workspace ${ws.name}: head checkpoint ${ws.head} is missing`);
      }
      const [last] = arr(await this.link.read(["XREVRANGE", this.keys.ws(ws.name, "ev"), "+", "-", "COUNT", "1"]));
      const lastSeq = last ? toEvent(ws.name, last).seq : 0;
      if (lastSeq > ws.revision) {
        problems.push(`workspace ${ws.name}: its event log ends at ${lastSeq}, past its revision ${ws.revision}`);
      }
      for (const cp of checkpoints) {
        if (!(await exists("tree", cp.root))) {
          problems.push(`workspace ${cp.workspace}: checkpoint ${cp.name}: root tree ${cp.root} is missing`);
        }
      }
      for (const [path, value] of fields(await this.link.read(["HGETALL", this.keys.ws(ws.name, "ov")]))) {
        const e = toEntry(value);
        if (!e) continue;
        const object = e.kind === "dir" ? "tree" : "blob";
        if (!(await exists(object, e.hash))) {
          problems.push(`workspace ${ws.name}: live entry ${path}: ${object} ${e.hash} is missing`);
        }
      }
    }
    problems.push(...(await this.chunks.problems()));
    return problems;
  }

  // --- tokens --------------------------------------------------------------------------------

  putToken(token: TokenRecord): Promise<void> {
    return this.tokens.putToken(token);
  }

  getToken(id: string): Promise<TokenRecord | null> {
    return this.tokens.getToken(id);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.tokens.listTokens();
  }

  revokeToken(id: string, at: number): Promise<boolean> {
    return this.tokens.revokeToken(id, at);
  }

  // --- approvals -----------------------------------------------------------------------------

  putApproval(approval: { id: string; createdAt: number; request: string }): Promise<void> {
    return this.approvals.putApproval(approval);
  }

  getApproval(id: string): Promise<ApprovalRecord | null> {
    return this.approvals.getApproval(id);
  }

  listApprovals(): Promise<ApprovalRecord[]> {
    return this.approvals.listApprovals();
  }

  decideApproval(id: string, decision: string): Promise<boolean> {
    return this.approvals.decideApproval(id, decision);
  }

  revokeApproval(id: string, at: number): Promise<boolean> {
    return this.approvals.revokeApproval(id, at);
  }

  deleteApprovals(ids: readonly string[]): Promise<number> {
    return this.approvals.deleteApprovals(ids);
  }

  // --- internals -----------------------------------------------------------------------------

  private runWs(workspace: string, script: scripts.Script, args: string[], readOnly = false): Promise<Reply> {
    return this.link.run(script, this.keys.workspace(workspace), args, readOnly);
  }

  private async checkpointIn(workspace: string, id: string): Promise<CheckpointRecord | null> {
    const v = str(await this.link.read(["HGET", this.keys.ws(workspace, "cp"), id]));
    return v === null ? null : toCheckpoint(parseCheckpoint(v));
  }

  /**
   * Records a new checkpoint's id in the global index before the script that stores it, and says
   * what the script must refuse: an id taken elsewhere (ids are store-wide; the script itself only
   * sees its own workspace). A checkpoint of another workspace never gets here (checked-store.ts).
   */
  private async claimCheckpoint(workspace: string, cp: CheckpointRecord): Promise<Claim> {
    if ((await this.link.write(["HSETNX", this.keys.checkpointIds, cp.id, workspace])) === 1) {
      return { problem: "", added: true };
    }
    const owner = str(await this.link.read(["HGET", this.keys.checkpointIds, cp.id]));
    if (owner === workspace || owner === null) return { problem: "", added: false };
    if (await this.checkpointIn(owner, cp.id)) return { problem: "ID_TAKEN", added: false };
    // A stale entry (its checkpoint or workspace is gone): take it over.
    await this.link.write(["HSET", this.keys.checkpointIds, cp.id, workspace]);
    return { problem: "", added: false };
  }

  /** Takes a name back out of the workspace index after a refused create, unless the workspace exists. */
  private async unlist(workspace: string, listed: boolean): Promise<void> {
    if (listed && !(await this.exists(workspace))) await this.link.write(["ZREM", this.keys.workspaces, workspace]);
  }

  private async exists(workspace: string): Promise<boolean> {
    return (await this.link.read(["EXISTS", this.keys.ws(workspace, "meta")])) === 1;
  }

  /** Drops an index entry claimCheckpoint added for a checkpoint its script then refused. */
  private async unclaim(workspace: string, cp: CheckpointRecord, claim: Claim): Promise<void> {
    if (claim.added && !(await this.checkpointIn(workspace, cp.id))) {
      await this.link.write(["HDEL", this.keys.checkpointIds, cp.id]);
    }
  }
}
