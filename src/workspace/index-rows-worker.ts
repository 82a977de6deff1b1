// The main thread's side of the index builder's worker thread (index-worker.ts): sends it batches
// of blobs to read and make rows of, and hands back each batch's rows in the order sent, so the
// main thread spends its time writing them while the second core reads, inflates, tokenizes and
// makes the posting lists. The builder (index-builder.ts) bounds how many batches are out (memory), and makes
// a batch's rows itself rather than wait for the worker.
import type { Worker } from "node:worker_threads";
import { AfsError, type ErrorCode } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import type { Env } from "../core/settings.js";
import { startWorker, workerScript } from "../core/worker-script.js";
import type { EncodedPostings } from "../search/postings.js";
import type { TextRow } from "../store/search/text-rows.js";
import type { Store } from "../store/store.js";
import type { Recycle, RowsReply, RowsRequest, WorkerSetup } from "./index-worker.js";

/** A batch's rows, all views of one buffer (handed back with recycle once they are written), and its posting lists in parts. */
export interface Rows {
  rows: TextRow[];
  buffer: ArrayBuffer;
  postings: EncodedPostings[];
}

interface Waiting {
  resolve: (rows: Rows) => void;
  reject: (e: Error) => void;
}

/** Most worker threads AFS_INDEX_WORKERS may ask for. */
const MAX_WORKERS = 8;

/** The builder's worker threads: each batch goes to the one with the fewest batches in hand. */
export class RowsWorker {
  private readonly waiting = new Map<number, Waiting & { worker: number }>();
  /** Batches in hand, by worker. */
  private readonly load: number[];
  private nextId = 0;
  private recycled = 0;
  private failed: Error | undefined;
  private readonly exited: Promise<unknown>;

  private constructor(private readonly workers: readonly Worker[]) {
    this.load = workers.map(() => 0);
    this.exited = Promise.all(workers.map((worker) => this.watch(worker)));
  }

  /** Worker threads making rows. */
  get size(): number {
    return this.workers.length;
  }

  private watch(worker: Worker): Promise<void> {
    worker.on("message", (reply: RowsReply) => {
      const waiting = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      if (waiting) this.load[waiting.worker] = (this.load[waiting.worker] as number) - 1;
      if ("error" in reply) {
        const { code, message, details } = reply.error;
        waiting?.reject(new AfsError(code as ErrorCode, message, details));
      } else waiting?.resolve({ rows: reply.rows, buffer: reply.buffer, postings: reply.postings });
    });
    worker.on("error", (e) => this.fail(new AfsError("INTERNAL", `the index builder's worker failed: ${e.message}`)));
    return new Promise((resolve) => {
      worker.once("exit", () => {
        this.fail(new AfsError("INTERNAL", "the index builder's worker ended before its work was done"));
        resolve();
      });
    });
  }

  /** Worker threads started by this process (tests see that a build used them). */
  static started = 0;

  /**
   * Workers for a builder over `store`, or null when the rows are made in process: a store that is
   * not a SQLite file (a Redis store's reads wait on the network, and its URL as shown holds no
   * password), or AFS_INDEX_WORKERS=0. Unset, one is used when its script is found;
   * AFS_INDEX_WORKERS=N requires N. One is the default for a job that runs in the background: on
   * an idle two-core machine a second made a million small files' build 12% faster (46 s -> 41 s),
   * but on a busy one slower (46 s -> 61 s), and on a tree of large bundles (node_modules) no
   * faster, for ~150 MB more.
   */
  static open(store: Store, maxIndexBytes: number, env: Env = {}): RowsWorker | null {
    const setting = env.AFS_INDEX_WORKERS;
    const asked = setting === undefined ? undefined : /^\d+$/.test(setting) ? Number(setting) : Number.NaN;
    if (asked !== undefined && !(asked <= MAX_WORKERS)) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `AFS_INDEX_WORKERS is ${JSON.stringify(setting)}; set it to 0 (index in the main thread) or a number of worker threads from 1 to ${MAX_WORKERS}`,
      );
    }
    if (asked === 0 || !store.url.startsWith("sqlite:")) return null;
    const script = workerScript("workspace", "index-worker", import.meta.url);
    if (!script) {
      if (asked === undefined) return null;
      throw new AfsError(
        "INTERNAL",
        `AFS_INDEX_WORKERS=${asked} but the index builder's worker script (workspace/index-worker.js) is not installed beside afs; reinstall afs, or set AFS_INDEX_WORKERS=0`,
      );
    }
    const workerData: WorkerSetup = { path: store.url.slice("sqlite:".length), maxIndexBytes };
    const count = asked ?? 1;
    RowsWorker.started += count;
    // A small young generation: the worker's garbage is each blob's short-lived bytes and strings,
    // and the default's semispaces cost ~30 MB of peak memory (measured: 310 MB -> 280 MB at 50k files).
    const resourceLimits = { maxYoungGenerationSizeMb: 8 };
    return new RowsWorker(Array.from({ length: count }, () => startWorker(script, { workerData, resourceLimits })));
  }

  /** The rows of these blobs (sizes by hash, from the tree), made by the worker. */
  rows(hashes: Hash[], sizes: ReadonlyMap<Hash, number>): Promise<Rows> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const request: RowsRequest = { id, hashes, sizes: hashes.map((h) => sizes.get(h)) };
    const worker = this.load.indexOf(Math.min(...this.load));
    this.load[worker] = (this.load[worker] as number) + 1;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, worker });
      this.workers[worker]?.postMessage(request);
    });
  }

  /** Hands a batch's buffer back once its rows are written (they are void from then on), to the workers in turn. */
  recycle(rows: Rows): void {
    const worker = this.workers[this.recycled++ % this.workers.length] as Worker;
    if (!this.failed) worker.postMessage({ recycle: rows.buffer } satisfies Recycle, [rows.buffer]);
  }

  /**
   * Ends the worker and waits for it to exit: at once when batches are still unanswered (the
   * builder stopped or failed, and will not write them), else once it has closed its store.
   */
  async close(): Promise<void> {
    const unanswered = this.waiting.size > 0;
    for (const worker of this.workers) {
      if (unanswered) await worker.terminate();
      else worker.postMessage("close");
    }
    await this.exited;
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
  }
}
