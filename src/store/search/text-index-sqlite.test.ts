import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempAfs } from "../../../test/helpers/tmp.js";
import { sha256 } from "../../core/hash.js";
import type { Afs } from "../../workspace/afs.js";
import { SqliteTextIndex } from "./text-index-sqlite.js";

let t: { afs: Afs; cleanup: () => Promise<void> };
beforeEach(async () => {
  t = await tempAfs();
});
afterEach(() => t.cleanup());

describe("SqliteTextIndex", () => {
  it("classifies a blob too large to index by its first bytes, never reading it whole", async () => {
    const text = Buffer.from("line of text\n".repeat(200_000)); // 2.6 MB
    const binary = Buffer.concat([Buffer.from([0, 1, 2]), Buffer.alloc(3_000_000, 7)]);
    await t.afs.store.putBlobs([
      { hash: sha256(text), data: text },
      { hash: sha256(binary), data: binary },
    ]);
    const wholeReads: string[] = [];
    // The store as the index sees it: any whole read of these blobs is recorded.
    const store = new Proxy(t.afs.store, {
      get(target, key, receiver) {
        if (key === "getBlob") {
          return (hash: string) => {
            wholeReads.push(hash);
            return target.getBlob(hash as never);
          };
        }
        const value = Reflect.get(target, key, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const index = new SqliteTextIndex(() => t.afs.searchDb, store, { maxIndexBytes: 1024 * 1024 });
    const built = await index.build([sha256(text), sha256(binary)]);
    expect(built).toMatchObject({ indexed: 2, skipped: 2 });
    expect(await index.status()).toMatchObject({ texts: 0, binary: 1, large: 1 });
    expect(wholeReads).toEqual([]);
  });
});
