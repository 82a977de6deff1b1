// Both machines churn through creates, edits, deletes, renames and folder removals on a few paths
// at once, with both syncs running in the background: the directories converge, and the races
// between the sync and the edits (a file or folder gone between its read and its write) are
// settled by looking again, never reported as errors.
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { type Machine, settle, tree, until, worldsOn } from "./helpers.js";

const OPS = 300;
const PATHS = ["x", "y", "d/x", "d/y", "d/e/x", "e/z"];

/** A small deterministic generator (the same churn each run; only the timing differs). */
function generator(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s >> 8) % n;
  };
}

async function churn(m: Machine, i: number, rnd: (n: number) => number): Promise<void> {
  const p = join(m.dir, PATHS[rnd(PATHS.length)] as string);
  const q = join(m.dir, PATHS[rnd(PATHS.length)] as string);
  const parent = join(p, "..");
  const k = rnd(10);
  // Each may fail (the path not there, a file where a folder goes): that is part of the churn.
  if (k < 5) {
    await mkdir(parent, { recursive: true });
    await writeFile(p, `${m.home} ${i}`);
  } else if (k < 7) await rm(p, { force: true });
  else if (k < 8) await rename(p, q);
  else if (k < 9 && parent !== m.dir) await rm(parent, { recursive: true, force: true });
  else await mkdir(p, { recursive: true });
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`both sides churning on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it(`${OPS} mixed edits on both sides converge with no error reported`, async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await w.mount(a, { workspace: ws, host: "a" });
      await w.mount(b, { workspace: ws, host: "b" });
      const rnd = generator(7);
      for (let i = 0; i < OPS; i++) {
        await churn(rnd(2) ? a : b, i, rnd).catch(() => {});
        if (rnd(4) === 0) await sleep(rnd(80));
      }
      await until(
        async () => {
          await settle(a, b);
          return JSON.stringify(await tree(a.dir)) === JSON.stringify(await tree(b.dir));
        },
        "both directories to agree",
        40_000,
      );
      for (const m of [a, b]) {
        expect(m.mount?.status()).toMatchObject({ state: "running", pending: 0, lastError: null });
      }
      // The workspace holds what both directories hold.
      const vol = await a.afs.workspaces.volume(ws);
      for (const [p, c] of Object.entries(await tree(a.dir))) {
        if (c === "dir") expect((await vol.stat(`/${p}`))?.kind, p).toBe("dir");
        else expect((await vol.readFile(`/${p}`)).toString(), p).toBe(c);
      }
    });
  });
}
