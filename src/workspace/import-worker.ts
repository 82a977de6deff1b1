// The worker thread of an import's pool (import-pool.ts): each message is a batch of paths, each
// reply the batch read, hashed and encoded, its one buffer transferred back.
import { parentPort } from "node:worker_threads";
import { encodeFiles } from "./import-batch.js";

export interface BatchRequest {
  id: number;
  paths: string[];
}

parentPort?.on("message", ({ id, paths }: BatchRequest) => {
  const batch = encodeFiles(paths);
  parentPort?.postMessage({ id, batch }, [batch.buffer]);
});
