// Content is stored once: import the corpus, fork it, import the same directory again, copy a
// file under a new name, checkpoint everything, and watch the blob count and bytes stay put after
// the first import (which itself holds exactly the corpus's distinct contents).
// Run: node --import tsx bench/dedup.ts
import { join } from "node:path";
import { Afs } from "../src/workspace/afs.js";
import { internalsOf } from "../src/workspace/engine/internals.js";
import { generateCorpus } from "./corpus.js";
import { diskBytes, emitJson, fmtBytes, isMain, makeTempDir, printTable, removeDir } from "./lib.js";

interface Counts {
  step: string;
  blobs: number;
  blobBytes: number;
  trees: number;
  diskBytes: number;
}

async function count(afs: Afs, home: string, step: string): Promise<Counts> {
  let blobs = 0;
  let blobBytes = 0;
  let trees = 0;
  for await (const b of internalsOf(afs).store.listObjects("blob")) {
    blobs++;
    blobBytes += b.size;
  }
  for await (const _ of internalsOf(afs).store.listObjects("tree")) trees++;
  return { step, blobs, blobBytes, trees, diskBytes: await diskBytes(home) };
}

export async function main(): Promise<void> {
  const work = await makeTempDir("afs-bench-dedup-");
  const home = join(work, "home");
  let opened: Afs | null = null;
  try {
    const afs = await Afs.open({ home, store: `sqlite:${join(home, "afs.db")}`, actor: "bench" });
    opened = afs;
    const corpus = join(work, "corpus");
    const info = generateCorpus(corpus);
    console.log(
      `corpus: ${info.files} files, ${info.bytes} bytes; distinct contents: ${info.uniqueBlobs} blobs, ${info.uniqueBytes} bytes`,
    );
    const steps: Counts[] = [await count(afs, home, "empty store")];
    const after = async (step: string, fn: () => Promise<unknown>) => {
      await fn();
      steps.push(await count(afs, home, step));
    };

    await after("import corpus as A", () => afs.workspaces.import("A", corpus));
    await after("fork A -> B", () => afs.workspaces.fork("A", "B"));
    await after("import same dir as C", () => afs.workspaces.import("C", corpus));
    const source = info.rare[0]?.files[0] ?? info.largest.path;
    await after(`B: copy ${source} to /copy-of-file`, async () => {
      const vol = await afs.workspaces.volume("B");
      await vol.writeFile("/copy-of-file", await vol.readFile(source), { op: "write" });
    });
    await after("checkpoint A, B, C", async () => {
      for (const ws of ["A", "B", "C"]) await afs.checkpoints.create(ws);
    });
    // Control: genuinely new bytes must show up, so the counter above is not blind.
    const fresh = Buffer.from("content no other file has: dedup control\n");
    await after(`control: A writes ${fresh.length} new bytes + checkpoint`, async () => {
      await (await afs.workspaces.volume("A")).writeFile("/control.txt", fresh, { op: "write" });
      await afs.checkpoints.create("A");
    });

    const first = steps[1] as Counts;
    printTable(
      "store contents after each step",
      ["step", "blobs", "blob bytes", "Δ blobs", "Δ blob bytes", "trees", "AFS_HOME on disk"],
      steps.map((s, i) => {
        const prev = steps[i - 1];
        return [
          s.step,
          s.blobs,
          s.blobBytes,
          prev ? s.blobs - prev.blobs : "",
          prev ? s.blobBytes - prev.blobBytes : "",
          s.trees,
          fmtBytes(s.diskBytes),
        ];
      }),
    );
    const afterImport = steps.slice(1, -1);
    const growthBlobs = (afterImport.at(-1) as Counts).blobs - first.blobs;
    const growthBytes = (afterImport.at(-1) as Counts).blobBytes - first.blobBytes;
    const exact = first.blobs === info.uniqueBlobs && first.blobBytes === info.uniqueBytes;
    console.log(
      `\nfirst import stored ${first.blobs} blobs / ${first.blobBytes} bytes vs ${info.uniqueBlobs} / ${info.uniqueBytes} distinct in the corpus (${exact ? "exact" : "DIFFERENT"})`,
    );
    console.log(
      `growth after the first import (fork, re-import, copy, checkpoints): ${growthBlobs} blobs, ${growthBytes} bytes — goal ~0: ${growthBlobs === 0 && growthBytes === 0 ? "met" : "MISSED"}`,
    );
    const control = steps.at(-1) as Counts;
    const prev = steps.at(-2) as Counts;
    console.log(
      `control write added ${control.blobs - prev.blobs} blob(s), ${control.blobBytes - prev.blobBytes} bytes`,
    );
    emitJson("dedup", {
      corpus_files: info.files,
      corpus_bytes: info.bytes,
      corpus_unique_blobs: info.uniqueBlobs,
      corpus_unique_bytes: info.uniqueBytes,
      steps: steps.map((s) => ({
        step: s.step,
        blobs: s.blobs,
        blob_bytes: s.blobBytes,
        trees: s.trees,
        disk_bytes: s.diskBytes,
      })),
      first_import_exact: exact,
      growth_blobs: growthBlobs,
      growth_bytes: growthBytes,
      goal_met: growthBlobs === 0 && growthBytes === 0,
    });
  } finally {
    await opened?.close();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) await main();
