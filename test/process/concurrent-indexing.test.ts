// Several afs processes search a workspace nobody has indexed yet, at the same moment: each builds
// the missing parts of the shared index file lazily. All must succeed with the same answers as a
// search after the index is complete, and every content must end up indexed exactly once.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt } from "../cli/run.js";

const PROCESSES = 4;
const FILES = 2000;

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  for (const k of Object.keys(afs.env)) if (k.startsWith("AFS_EMBED_") || k === "OPENAI_API_KEY") delete afs.env[k];
  const dir = afs.tmp("tree");
  for (let i = 0; i < FILES; i++) {
    const sub = join(dir, `d${i % 10}`);
    await mkdir(sub, { recursive: true });
    const marker = i % 7 === 0 ? "needle_in_the_haystack" : "plain hay";
    await writeFile(join(sub, `f${i}.txt`), `file ${i}\n${marker}\nretry backoff ${i % 13}\n`);
  }
  afs.ok(["ws", "import", "shared", dir]);
});
afterAll(() => afs.cleanup());

describe("processes indexing one index file at once", () => {
  it("all answer correctly and each content is indexed once", async () => {
    const grep = ["fs", "grep", "needle_in_the_haystack", "-l", "--workspace", "shared", "--json"];
    const query = ["fs", "query", "retry backoff", "-w", "shared", "--json", "-m", "keyword"];
    const runs = await Promise.all(Array.from({ length: PROCESSES }, (_, i) => afs.start(i % 2 === 0 ? grep : query)));
    for (const r of runs) expect(r.status, r.stderr).toBe(0);

    const expectedFiles = Array.from({ length: FILES }, (_, i) => i)
      .filter((i) => i % 7 === 0)
      .map((i) => `/d${i % 10}/f${i}.txt`)
      .sort();
    for (const r of runs.filter((_, i) => i % 2 === 0)) {
      expect((JSON.parse(r.stdout) as { files: string[] }).files.sort()).toEqual(expectedFiles);
    }
    const settled = afs.json<{ results: { path: string }[] }>(query.filter((a) => a !== "--json"));
    for (const r of runs.filter((_, i) => i % 2 === 1)) {
      expect((JSON.parse(r.stdout) as { results: { path: string }[] }).results).toEqual(settled.results);
    }

    const status = afs.json<{ stored: { blobs: number }; text: { texts: number } }>(["index", "status"]);
    expect(status.stored.blobs).toBe(FILES);
    expect(status.text.texts).toBe(FILES);
  }, 120_000);
});
