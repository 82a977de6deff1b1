// One file written on both machines within milliseconds, round after round, with both syncs running
// in the background: every content written survives (at the path or in a conflict copy, on both
// sides, or, when the sync carried one side's write across before the other side wrote over it,
// uploaded: in the file's history) and both directories end identical.
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { settle, tree, until, worldsOn } from "./helpers.js";

const ROUNDS = 20;

/** The contents of f.txt and of its conflict copies, as a set. */
const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

const versions = (t: Record<string, string>): Set<string> =>
  new Set(Object.entries(t).flatMap(([p, c]) => (p === "f.txt" || /^f\.conflict-[ab]-.*\.txt$/.test(p) ? [c] : [])));

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`one file raced on two machines on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it(`${ROUNDS} rounds of writes on both sides keep every content, and both directories end identical`, async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await w.mount(a, { workspace: ws, host: "a" });
      await writeFile(join(a.dir, "f.txt"), "base");
      await w.mount(b, { workspace: ws, host: "b" });
      await until(async () => (await tree(b.dir))["f.txt"] === "base", "the base version on b");
      /** Every content the workspace was given (its events' new hashes): a write the other side later overwrote is there. */
      const uploaded = async (): Promise<Set<string>> => {
        const out = new Set<string>();
        for (let after = 0; ; ) {
          const page = await a.afs.events.list(ws, { after, limit: 1000 });
          for (const e of page.events) if (e.newHash) out.add(e.newHash);
          if (!page.more) return out;
          after = page.next;
        }
      };

      for (let round = 1; round <= ROUNDS; round++) {
        const mine = `a ${round}`;
        const theirs = `b ${round}`;
        // Both within a few milliseconds, in either order: some land while the other side's
        // upload or download of the previous write is in flight.
        const gap = (round * 7) % 13;
        const first = round % 2 === 0 ? [a.dir, mine] : [b.dir, theirs];
        const second = round % 2 === 0 ? [b.dir, theirs] : [a.dir, mine];
        await writeFile(join(first[0] as string, "f.txt"), first[1] as string);
        if (gap > 0) await sleep(gap);
        await writeFile(join(second[0] as string, "f.txt"), second[1] as string);
        const both = async (): Promise<boolean> => {
          const [ta, tb] = [await tree(a.dir), await tree(b.dir)];
          if (JSON.stringify(ta) !== JSON.stringify(tb)) return false;
          const [here, up] = [versions(ta), await uploaded()];
          return [mine, theirs].every((v) => here.has(v) || up.has(sha(v)));
        };
        await until(both, `round ${round}: both contents on both sides`, 30_000);
      }

      await settle(a, b, a, b);
      const ta = await tree(a.dir);
      expect(ta).toEqual(await tree(b.dir));
      // Every content of every round is kept: in the tree (at the path or a conflict copy) or uploaded.
      const [kept, up] = [versions(ta), await uploaded()];
      for (let round = 1; round <= ROUNDS; round++) {
        for (const v of [`a ${round}`, `b ${round}`]) expect(kept.has(v) || up.has(sha(v)), v).toBe(true);
      }
      // The workspace agrees with both directories.
      const vol = await a.afs.workspaces.volume(ws);
      for (const [p, c] of Object.entries(ta)) expect((await vol.readFile(`/${p}`)).toString(), p).toBe(c);
      expect(a.mount?.status().state).toBe("running");
      expect(b.mount?.status().state).toBe("running");
      expect(await readFile(join(a.dir, "f.txt"), "utf8")).toMatch(/^[ab] 20$/);
    });
  });
}
