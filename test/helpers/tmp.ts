// Temporary homes and directories for tests, removed afterwards.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Afs } from "../../src/workspace/afs.js";

export async function tempDir(prefix = "afs-test-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** An Afs on a fresh SQLite file in its own AFS_HOME. */
export async function tempAfs(): Promise<{ afs: Afs; home: string; cleanup: () => Promise<void> }> {
  const { dir, cleanup } = await tempDir("afs-home-");
  const afs = await Afs.open({ home: dir, actor: "test" });
  return {
    afs,
    home: dir,
    cleanup: async () => {
      await afs.close();
      await cleanup();
    },
  };
}

/** An Afs in a fresh home plus an empty project directory named `name` (to mount), removed afterwards. */
export async function tempProject(name: string): Promise<{ afs: Afs; dir: string; cleanup: () => Promise<void> }> {
  const a = await tempAfs();
  const d = await tempDir("afs-project-");
  const dir = join(d.dir, name);
  await mkdir(dir);
  return {
    afs: a.afs,
    dir,
    cleanup: async () => {
      await a.cleanup();
      await d.cleanup();
    },
  };
}
