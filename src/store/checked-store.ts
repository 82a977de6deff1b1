// The Store contract's checks in one place, around every store opened (Kysely's RuntimeDriver):
// a store implementation (StoreDriver) supplies only its primitives; arguments it must refuse,
// calls that need no round trip, what follows from another method, and use after close are
// handled here, once, so SQLite and Redis cannot drift apart on them.
import type { Entry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { ApprovalRecord } from "./approvals.js";
import { type ByteRange, checkRanges } from "./chunking.js";
import { checkDump } from "./dump.js";
import type { OnRepackProgress, RepackResult } from "./repack.js";
import type {
  CheckpointRecord,
  Commit,
  EventFollower,
  EventRecord,
  HeadMove,
  NewBlob,
  OverlayRow,
  Store,
  TemplateRecord,
  WorkspaceDump,
  WorkspaceRecord,
} from "./store.js";
import type { TokenRecord } from "./tokens.js";

/** What a store implements: the Store less what CheckedStore derives (a single range is one of several). */
export type StoreDriver = Omit<Store, "readBlobRange" | "eachSmallBlob"> & Partial<Pick<Store, "eachSmallBlob">>;

/** Blobs asked for at once by eachSmallBlob on a store without a batch read of its own. */
const EACH_BATCH = 256;

const refuse = (message: string): Promise<never> => Promise.reject(new AfsError("INVALID_ARGUMENT", message));

/** A checkpoint recorded in `workspace` must say so; ids and names are checked by the store, atomically. */
function foreign(workspace: string, cp: CheckpointRecord | null): string | null {
  return cp && cp.workspace !== workspace ? `checkpoint ${cp.name} belongs to ${cp.workspace}, not ${workspace}` : null;
}

/** Wraps `driver` once (wrapping a CheckedStore returns it as it is). */
export function checkedStore(driver: StoreDriver | Store): Store {
  return driver instanceof CheckedStore ? driver : new CheckedStore(driver);
}

/** The implementation under a store `checkedStore` made (for tests and diagnostics only). */
export const driverOf = (store: Store): StoreDriver => (store instanceof CheckedStore ? store.driver : store);

class CheckedStore implements Store {
  private closed = false;

  constructor(readonly driver: StoreDriver) {}

  get url(): string {
    return this.driver.url;
  }

  get chunkBytes(): number {
    return this.driver.chunkBytes;
  }

  /** Every call after close() fails the same way on every store. */
  private get d(): StoreDriver {
    if (this.closed) throw new AfsError("IO_ERROR", `the store at ${this.driver.url} is closed`);
    return this.driver;
  }

  /** `fn` on the driver, a closed store's refusal as a rejected promise like any other failure. */
  private call<T>(fn: (d: StoreDriver) => Promise<T>): Promise<T> {
    try {
      return fn(this.d);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A driver's iterable, a closed store's refusal coming from the first step like any other failure. */
  private async *iterate<T>(fn: (d: StoreDriver) => AsyncIterable<T>): AsyncGenerator<T> {
    yield* fn(this.d);
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return this.driver.close();
  }

  // --- objects -------------------------------------------------------------------------------

  putBlobs(blobs: ReadonlyArray<NewBlob>): Promise<void> {
    return this.call((d) => (blobs.length === 0 ? Promise.resolve() : d.putBlobs(blobs)));
  }

  putBlobStream(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<{ hash: Hash; size: number }> {
    return this.call((d) => d.putBlobStream(source));
  }

  getBlob(hash: Hash): Promise<Buffer | null> {
    return this.call((d) => d.getBlob(hash));
  }

  eachSmallBlob(hashes: readonly Hash[], max: number, visit: (hash: Hash, bytes: Buffer) => void): Promise<void> {
    return this.call(async (d) => {
      if (d.eachSmallBlob) return d.eachSmallBlob(hashes, max, visit);
      // A batch's sizes, then its small blobs, each asked at once: on a remote store their round
      // trips overlap.
      for (let i = 0; i < hashes.length; i += EACH_BATCH) {
        const batch = hashes.slice(i, i + EACH_BATCH);
        const sizes = await Promise.all(batch.map((h) => d.blobSize(h)));
        const small = batch.filter((_, j) => sizes[j] !== null && (sizes[j] as number) <= max);
        const datas = await Promise.all(small.map((h) => d.getBlob(h)));
        for (const [j, hash] of small.entries()) {
          const data = datas[j];
          if (data) visit(hash, data);
        }
      }
    });
  }

  blobSize(hash: Hash): Promise<number | null> {
    return this.call((d) => d.blobSize(hash));
  }

  async readBlobRange(hash: Hash, offset: number, length: number): Promise<Buffer | null> {
    return (await this.readBlobRanges(hash, [{ offset, length }]))?.[0] ?? null;
  }

  readBlobRanges(hash: Hash, ranges: readonly ByteRange[]): Promise<Buffer[] | null> {
    return this.call((d) => {
      checkRanges(ranges);
      return d.readBlobRanges(hash, ranges);
    });
  }

  blobStream(hash: Hash): AsyncIterable<Buffer> {
    return this.iterate((d) => d.blobStream(hash));
  }

  hasBlobs(hashes: readonly Hash[]): Promise<Set<Hash>> {
    return this.call((d) => (hashes.length === 0 ? Promise.resolve(new Set()) : d.hasBlobs(hashes)));
  }

  putTrees(trees: ReadonlyArray<{ hash: Hash; data: Uint8Array }>): Promise<void> {
    return this.call((d) => (trees.length === 0 ? Promise.resolve() : d.putTrees(trees)));
  }

  getTree(hash: Hash): Promise<Buffer | null> {
    return this.call((d) => d.getTree(hash));
  }

  // --- workspaces ----------------------------------------------------------------------------

  createWorkspace(ws: WorkspaceRecord, initial: CheckpointRecord): Promise<void> {
    return this.call((d) => {
      if (ws.head !== initial.id) return refuse("a new workspace's head must be its initial checkpoint");
      const problem = foreign(ws.name, initial);
      return problem ? refuse(problem) : d.createWorkspace(ws, initial);
    });
  }

  getWorkspace(name: string): Promise<WorkspaceRecord | null> {
    return this.call((d) => d.getWorkspace(name));
  }

  listWorkspaces(): Promise<WorkspaceRecord[]> {
    return this.call((d) => d.listWorkspaces());
  }

  deleteWorkspace(name: string): Promise<boolean> {
    return this.call((d) => d.deleteWorkspace(name));
  }

  importWorkspace(dump: WorkspaceDump): Promise<void> {
    return this.call((d) => {
      checkDump(dump);
      return d.importWorkspace(dump);
    });
  }

  setTemplate(workspace: string, slug: string | null): Promise<void> {
    return this.call((d) => d.setTemplate(workspace, slug));
  }

  listTemplates(): Promise<TemplateRecord[]> {
    return this.call((d) => d.listTemplates());
  }

  // --- overlay -------------------------------------------------------------------------------

  overlayGet(workspace: string, paths: readonly string[]): Promise<Map<string, Entry | null>> {
    return this.call((d) => (paths.length === 0 ? Promise.resolve(new Map()) : d.overlayGet(workspace, paths)));
  }

  overlayUnder(workspace: string, dir: string, childrenOnly?: boolean): Promise<OverlayRow[]> {
    return this.call((d) => d.overlayUnder(workspace, dir, childrenOnly));
  }

  overlayCount(workspace: string): Promise<number> {
    return this.call((d) => d.overlayCount(workspace));
  }

  commit(workspace: string, commit: Commit): Promise<number> {
    return this.call((d) =>
      commit.events.length === 0 ? refuse("a commit needs at least one event") : d.commit(workspace, commit),
    );
  }

  moveHead(workspace: string, move: HeadMove): Promise<number> {
    return this.call((d) => {
      const problem = foreign(workspace, move.checkpoint);
      return problem ? refuse(problem) : d.moveHead(workspace, move);
    });
  }

  // --- checkpoints and events ----------------------------------------------------------------

  getCheckpoint(workspace: string, nameOrId: string): Promise<CheckpointRecord | null> {
    return this.call((d) => d.getCheckpoint(workspace, nameOrId));
  }

  getCheckpointById(id: string): Promise<CheckpointRecord | null> {
    return this.call((d) => d.getCheckpointById(id));
  }

  listCheckpoints(workspace: string): Promise<CheckpointRecord[]> {
    return this.call((d) => d.listCheckpoints(workspace));
  }

  deleteCheckpoint(workspace: string, id: string): Promise<boolean> {
    return this.call((d) => d.deleteCheckpoint(workspace, id));
  }

  listEvents(workspace: string, afterSeq: number, limit: number): Promise<EventRecord[]> {
    return this.call((d) => (limit === 0 ? Promise.resolve([]) : d.listEvents(workspace, afterSeq, limit)));
  }

  getWorkspaceSetting(workspace: string, key: string): Promise<string | null> {
    return this.call((d) => d.getWorkspaceSetting(workspace, key));
  }

  setWorkspaceSetting(workspace: string, key: string, value: string | null): Promise<void> {
    return this.call((d) => d.setWorkspaceSetting(workspace, key, value));
  }

  listPathEvents(workspace: string, path: string, beforeSeq: number | null, limit: number): Promise<EventRecord[]> {
    return this.call((d) => {
      if (!Number.isSafeInteger(limit) || limit < 0) return refuse(`limit must be a whole number, not ${limit}`);
      if (beforeSeq !== null && (!Number.isSafeInteger(beforeSeq) || beforeSeq < 0)) {
        return refuse(`beforeSeq must be a sequence number or null, not ${beforeSeq}`);
      }
      if (!path.startsWith("/")) return refuse(`an event path is absolute, not ${JSON.stringify(path)}`);
      return limit === 0 || beforeSeq === 0 ? Promise.resolve([]) : d.listPathEvents(workspace, path, beforeSeq, limit);
    });
  }

  followEvents(
    workspace: string,
    afterSeq: number,
    onEvents: (events: EventRecord[]) => Promise<void> | void,
  ): EventFollower {
    return this.d.followEvents(workspace, afterSeq, onEvents);
  }

  // --- garbage collection and integrity --------------------------------------------------------

  gcRoots(): Promise<{ trees: Set<Hash>; blobs: Set<Hash> }> {
    return this.call((d) => d.gcRoots());
  }

  listObjects(kind: "blob" | "tree"): AsyncIterable<{ hash: Hash; createdAt: number; size: number }> {
    return this.iterate((d) => d.listObjects(kind));
  }

  deleteObjects(kind: "blob" | "tree", hashes: readonly Hash[]): Promise<number> {
    return this.call((d) => (hashes.length === 0 ? Promise.resolve(0) : d.deleteObjects(kind, hashes)));
  }

  sweepChunks(createdBefore: number): Promise<{ deleted: number; bytes: number }> {
    return this.call((d) => d.sweepChunks(createdBefore));
  }

  repack(onProgress?: OnRepackProgress): Promise<RepackResult> {
    return this.call((d) => d.repack(onProgress));
  }

  checkIntegrity(): Promise<string[]> {
    return this.call((d) => d.checkIntegrity());
  }

  // --- tokens --------------------------------------------------------------------------------

  putToken(token: TokenRecord): Promise<void> {
    return this.call((d) => d.putToken(token));
  }

  getToken(id: string): Promise<TokenRecord | null> {
    return this.call((d) => d.getToken(id));
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.call((d) => d.listTokens());
  }

  revokeToken(id: string, at: number): Promise<boolean> {
    return this.call((d) => d.revokeToken(id, at));
  }

  // --- approvals -----------------------------------------------------------------------------

  putApproval(approval: { id: string; createdAt: number; request: string }): Promise<void> {
    return this.call((d) => d.putApproval(approval));
  }

  getApproval(id: string): Promise<ApprovalRecord | null> {
    return this.call((d) => d.getApproval(id));
  }

  listApprovals(): Promise<ApprovalRecord[]> {
    return this.call((d) => d.listApprovals());
  }

  decideApproval(id: string, decision: string): Promise<boolean> {
    return this.call((d) => d.decideApproval(id, decision));
  }

  revokeApproval(id: string, at: number): Promise<boolean> {
    return this.call((d) => d.revokeApproval(id, at));
  }

  deleteApprovals(ids: readonly string[]): Promise<number> {
    return ids.length === 0 ? this.call(async () => 0) : this.call((d) => d.deleteApprovals(ids));
  }
}
