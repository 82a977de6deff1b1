// The streamed import and export on every store (AFS_TEST_STORES): a tree with nested and empty
// directories, empty, executable, chunked (> 4 MiB) and window-read (> 256 KiB) files, a symlink,
// ignored files and more small files than one store batch takes goes in and comes back out byte
// for byte, with the same root tree on every store; a file over the cap is skipped or refused.
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { Afs } from "../../src/workspace/afs.js";
import { redisFactory, STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { tempDir } from "../helpers/tmp.js";

const SMALL_FILES = 5000;
let src: { dir: string; cleanup: () => Promise<void> };
const roots = new Map<string, string>();

beforeAll(async () => {
  src = await tempDir("afs-transfer-src-");
  const at = (p: string) => join(src.dir, p);
  for (const d of ["a/b/c", "empty", "many/x", "many/y"]) mkdirSync(at(d), { recursive: true });
  writeFileSync(at(".gitignore"), "*.log\nbuild/\n");
  writeFileSync(at("skip.log"), "ignored\n");
  mkdirSync(at("build"));
  writeFileSync(at("build/out.js"), "ignored too\n");
  writeFileSync(at("a/b/c/deep.txt"), "deep\n");
  writeFileSync(at("a/empty.txt"), "");
  writeFileSync(at("a/run.sh"), "#!/bin/sh\necho hi\n", { mode: 0o755 });
  symlinkSync("b/c/deep.txt", at("a/link"));
  const big = Buffer.alloc(5 * 1024 * 1024 + 123);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(Math.imul(i, 2654435761) >>> 0, i);
  writeFileSync(at("big.bin"), big);
  writeFileSync(at("medium.txt"), "medium line\n".repeat(30_000));
  for (let i = 0; i < SMALL_FILES; i++) writeFileSync(at(`many/${i % 2 ? "x" : "y"}/f${i}.txt`), `file ${i}\n`);
});
afterAll(() => src.cleanup());

/** Every kept entry under `dir` as [path, kind, bytes or link target, executable]. */
function snapshot(dir: string, rel = "", out: string[][] = []): string[][] {
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    if (!rel && (name === "skip.log" || name === "build")) continue;
    const st = lstatSync(join(dir, p));
    if (st.isDirectory()) {
      out.push([p, "dir", "", ""]);
      snapshot(dir, p, out);
    } else if (st.isSymbolicLink()) out.push([p, "link", readlinkSync(join(dir, p)), ""]);
    else out.push([p, "file", readFileSync(join(dir, p)).toString("base64"), String((st.mode & 0o111) !== 0)]);
  }
  return out;
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`import and export on ${storeName}`, () => {
    const redis = storeName === "redis" ? redisFactory().server : null;

    async function open(): Promise<{ afs: Afs; done: () => Promise<void> }> {
      const home = await tempDir("afs-transfer-home-");
      const store = redis ? `${redis().url}?prefix=transfer${process.pid}x${Date.now()}` : `sqlite:${home.dir}/afs.db`;
      const afs = await Afs.open({ home: home.dir, store, actor: "test" });
      const done = async (): Promise<void> => {
        await afs.close();
        await home.cleanup();
      };
      return { afs, done };
    }

    it("round-trips a tree byte for byte, with the same root on every store", { timeout: 120_000 }, async () => {
      const { afs, done } = await open();
      try {
        const r = await afs.workspaces.import("t", src.dir);
        expect(r.files).toBe(SMALL_FILES + 6);
        expect(r.skipped).toEqual([]);
        const head = (await afs.checkpoints.list("t"))[0];
        roots.set(storeName, head?.root as string);
        for (const [name, root] of roots) expect(root, `root on ${storeName} vs ${name}`).toBe(head?.root);
        const out = await tempDir("afs-transfer-out-");
        try {
          const exported = await afs.workspaces.export("t", join(out.dir, "x"));
          expect(exported.files).toBe(SMALL_FILES + 6);
          expect(snapshot(join(out.dir, "x"))).toEqual(snapshot(src.dir));
        } finally {
          await out.cleanup();
        }
      } finally {
        await done();
      }
    });

    it("skips a file over the cap, or with strict refuses the import naming it", async () => {
      const { afs, done } = await open();
      try {
        const r = await afs.workspaces.import("capped", src.dir, { maxFileBytes: 1024 * 1024 });
        expect(r.skipped.map((s) => s.path)).toEqual(["/big.bin"]);
        const err = await afs.workspaces
          .import("strict", src.dir, { maxFileBytes: 1024 * 1024, strict: true })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AfsError);
        expect((err as AfsError).code).toBe("QUOTA_EXCEEDED");
        expect((err as AfsError).details.file).toBe("/big.bin");
        expect((await afs.workspaces.list()).map((w) => w.name)).not.toContain("strict");
      } finally {
        await done();
      }
    });
  });
}
