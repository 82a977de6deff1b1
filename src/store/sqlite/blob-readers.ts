// A second thread for Store.eachSmallBlob: a worker (blob-reader.ts) with its own read-only
// connection reads and inflates a share of a large call's blobs while the calling thread reads the
// rest, so `grep -c` of a common literal over 200k files can use both cores, as rg does. The worker
// starts on the first large call, is kept for the next, never keeps a process alive (unref'd
// between calls) and ends with the store. Where it cannot start or fails, its share is read here.
//
// Off unless asked for (SqliteStoreOptions.parallelReads): on this project's shared 2-core machine
// it never paid. A 200k-file count took 2.9-3.1 s with it against 2.4-2.8 s without (load average
// ~2.4), ~30% longer at load 7, with ~10% more CPU (copies, messages) and ~45 MB more memory. It
// needs a core that is really free; measure again on one before turning it on.
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { AfsError, type ErrorCode } from "../../core/errors.js";
import type { Hash } from "../../core/hash.js";
import type { ReadJob, ReadReply } from "./blob-reader.js";

/**
 * Fewest hashes a call shares with the worker: below, its start (~50 ms, once) and the messages
 * cost about what they save.
 */
export const PARALLEL_MIN = 1024;

type Visit = (hash: Hash, bytes: Buffer) => void;

interface Job {
  visit: Visit;
  resolve: (chunked: Hash[]) => void;
  reject: (e: unknown) => void;
}

/**
 * How to start the worker: its module beside this one (tsc's output), or, from the CLI bundle in
 * dist/cli, tsc's output in dist/store/sqlite; from the sources (tests), the .ts through tsx, whose
 * loader must be registered inside the worker before the module loads (Node 20 gives a worker's own
 * --import no say over its entry module).
 */
function workerSource(): { source: string | URL; eval: boolean } | null {
  for (const path of ["./blob-reader.js", "../store/sqlite/blob-reader.js"]) {
    const url = new URL(path, import.meta.url);
    if (url.protocol === "file:" && existsSync(url)) return { source: url, eval: false };
  }
  const ts = new URL("./blob-reader.ts", import.meta.url);
  if (ts.protocol !== "file:" || !existsSync(ts)) return null;
  const code = `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(ts.href)}); })`;
  return { source: code, eval: true };
}

export class BlobReaderPool {
  /** undefined: not started yet; null: cannot run (then every call reads in the calling thread). */
  private worker: Worker | null | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 0;

  constructor(private readonly file: string) {}

  /** Whether a worker runs (or may yet start): false once it could not start or failed. */
  get available(): boolean {
    return this.worker !== null;
  }

  /**
   * Reads one batch (small-blobs.ts) in the worker, visiting each blob when the answer arrives;
   * resolves to the hashes stored as chunks (for the caller to read), or to null when no worker runs
   * or it died (then nothing of the batch was visited: the caller reads it). Throws what the worker
   * or `visit` threw.
   */
  read(hashes: readonly Hash[], max: number, visit: Visit): Promise<Hash[] | null> {
    const worker = this.start();
    if (worker === null) return Promise.resolve(null);
    const id = this.nextId++;
    const done = new Promise<Hash[]>((resolve, reject) => this.jobs.set(id, { visit, resolve, reject }));
    if (this.jobs.size === 1) worker.ref();
    worker.postMessage({ id, hashes, max } satisfies ReadJob);
    return done.catch((e: unknown) => {
      if (e instanceof WorkerGone) return null;
      throw e;
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private start(): Worker | null {
    if (this.worker !== undefined) return this.worker;
    const module = workerSource();
    if (module === null) {
      this.worker = null;
      return null;
    }
    const worker = new Worker(module.source, {
      eval: module.eval,
      workerData: { file: this.file },
      // It holds a few batches at a time: a small heap keeps its memory small (a default one grew
      // the process by ~60 MB).
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    });
    worker.unref();
    worker.on("message", (reply: ReadReply) => this.reply(reply));
    // A worker that cannot start or dies: its jobs are read in the calling thread, as are later ones.
    const fail = () => {
      this.worker = null;
      for (const job of this.jobs.values()) job.reject(new WorkerGone());
      this.jobs.clear();
    };
    worker.on("error", fail);
    worker.on("exit", fail);
    this.worker = worker;
    return worker;
  }

  /** A job is over: the worker keeps no process alive while it has none. */
  private finish(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.worker?.unref();
  }

  private reply(reply: ReadReply): void {
    const job = this.jobs.get(reply.id);
    if (!job) return;
    this.finish(reply.id);
    if ("error" in reply) {
      const { code, message } = reply.error;
      job.reject(code ? new AfsError(code as ErrorCode, message) : new Error(message));
      return;
    }
    try {
      let start = 0;
      for (const [i, hash] of reply.hashes.entries()) {
        const end = reply.ends[i] as number;
        job.visit(hash, Buffer.from(reply.data, start, end - start));
        start = end;
      }
    } catch (e) {
      job.reject(e);
      return;
    }
    job.resolve(reply.chunked);
  }
}

/** The worker stopped (it could not start, or died): not an error of the read, which is done here instead. */
class WorkerGone extends Error {}
