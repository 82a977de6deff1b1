import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { IndexDb } from "./index-db.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("afs-index-db-"));
});
afterEach(() => cleanup());

describe("IndexDb.ensureSchema", () => {
  it("opens an up-to-date index without waiting for another process's write", () => {
    const file = join(dir, "afs.index.db");
    const writer = IndexDb.open(file);
    const steps = ["CREATE TABLE t (a)"];
    writer.ensureSchema("c", steps);
    writer.db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (1);");
    const reader = IndexDb.open(file);
    const started = performance.now();
    reader.ensureSchema("c", steps);
    expect(performance.now() - started).toBeLessThan(1000);
    writer.db.exec("COMMIT");
    // Behind: migrated, once.
    reader.ensureSchema("c", [...steps, "CREATE TABLE u (b)"]);
    expect(reader.db.prepare("SELECT count(*) FROM u").pluck().get()).toBe(0);
    reader.ensureSchema("c", [...steps, "CREATE TABLE u (b)"]);
    // Ahead of this afs: refused.
    expect(() => writer.ensureSchema("c", steps)).toThrow(/newer than this afs knows/);
    reader.close();
    writer.close();
  });
});
