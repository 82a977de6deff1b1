// Switching a SQLite file to WAL needs a moment alone with it, and SQLite answers BUSY at once
// instead of waiting, so processes that open a new file together (two afs commands on a fresh
// home, searches building a new index file) retry here until the busy timeout.
import type Database from "better-sqlite3";

export function useWal(db: Database.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      if (db.pragma("journal_mode = WAL", { simple: true }) === "wal") return;
    } catch (e) {
      if ((e as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw e;
    }
    if (Date.now() > deadline) throw new Error(`could not switch ${db.name} to WAL mode within ${timeoutMs} ms`);
    Atomics.wait(pause, 0, 0, wait);
  }
}
