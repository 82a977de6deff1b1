// Worker threads for an import: reading, hashing and deflating small files is most of an import's
// CPU, so it runs beside the main thread's walk and store transactions instead of between them.
// Batches of paths go to the least busy worker; each comes back as one transferred buffer.
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { AfsError } from "../core/errors.js";
import type { Env } from "../core/settings.js";
import { startWorker, type WorkerScript, workerScript } from "../core/worker-script.js";
import type { EncodedBatch } from "./import-batch.js";
import type { BatchRequest } from "./import-worker.js";

/** Most worker threads an import starts by default: each holds a heap of its own (~40 MB RSS). */
const MAX_DEFAULT_WORKERS = 4;

/**
 * Worker threads from AFS_IMPORT_WORKERS (0: everything on the main thread); by default one per
 * core, at most four. Not one fewer than the cores: with one worker on two cores the main thread
 * (walk and store transactions) idled half the time while the worker deflated (profiled at 200k files).
 */
export function importWorkersFrom(env: Env): number {
  const raw = env.AFS_IMPORT_WORKERS;
  if (raw === undefined || raw === "") return Math.min(MAX_DEFAULT_WORKERS, availableParallelism());
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0 || n > 64) {
    throw new AfsError("INVALID_ARGUMENT", `AFS_IMPORT_WORKERS must be a whole number from 0 to 64 (got ${raw})`);
  }
  return n;
}

/**
 * A worker's young generation (V8's default is 16 MB or more): what it allocates per batch is a
 * few arrays and Buffer wrappers (the bytes live outside the heap), and the default cost ~25 MB of
 * RSS per worker (2 workers at 200k files: 270 MB peak with the default, 214 MB with this; same CPU).
 */
const YOUNG_GENERATION_MB = 2;

/** The worker's script; INTERNAL when it is not installed. */
export function importWorkerScript(): WorkerScript {
  const script = workerScript("workspace", "import-worker", import.meta.url);
  if (script) return script;
  throw new AfsError(
    "INTERNAL",
    `the import's worker script is missing next to ${import.meta.url}; reinstall afs, or set AFS_IMPORT_WORKERS=0`,
  );
}

interface Slot {
  worker: Worker;
  busy: number;
  /** Replies this worker owes, by request id. */
  owed: Map<number, { resolve: (b: EncodedBatch) => void; reject: (e: unknown) => void }>;
}

export class ImportPool {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private failure: AfsError | null = null;
  private closing = false;

  constructor(size: number, script: WorkerScript = importWorkerScript()) {
    for (let i = 0; i < size; i++) {
      const worker = startWorker(script, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
      const slot: Slot = { worker, busy: 0, owed: new Map() };
      worker.on("message", ({ id, batch }: { id: number; batch: EncodedBatch }) => {
        const waiter = slot.owed.get(id);
        slot.owed.delete(id);
        slot.busy--;
        waiter?.resolve(batch);
      });
      worker.on("error", (e) => this.fail(slot, `an import worker thread failed: ${e.message}`));
      worker.on("exit", (code) => {
        if (!this.closing) this.fail(slot, `an import worker thread exited (code ${code}) with work undone`);
      });
      this.slots.push(slot);
    }
  }

  /** Reads, hashes and encodes `paths` on the least busy worker. */
  run(paths: string[]): Promise<EncodedBatch> {
    if (this.failure) return Promise.reject(this.failure);
    let slot = this.slots[0] as Slot;
    for (const s of this.slots) if (s.busy < slot.busy) slot = s;
    const id = this.nextId++;
    slot.busy++;
    return new Promise((resolve, reject) => {
      slot.owed.set(id, { resolve, reject });
      slot.worker.postMessage({ id, paths } satisfies BatchRequest);
    });
  }

  /** Stops every worker; replies still owed are dropped (the import has failed or is done). */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private fail(slot: Slot, message: string): void {
    this.failure ??= new AfsError(
      "INTERNAL",
      `${message}; retry the import with AFS_IMPORT_WORKERS=0 to read files on the main thread`,
    );
    for (const w of slot.owed.values()) w.reject(this.failure);
    slot.owed.clear();
  }
}
