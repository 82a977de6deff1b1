// Real git in a mounted directory: a branch switch rewrites hundreds of files in nested
// directories in one burst, and the other machine's directory converges on the same tree while
// .git/ stays on the machine that holds it.
import { execFileSync } from "node:child_process";
import { lstat, mkdir, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { STORE_NAMES, storeEnabled } from "../contract/stores.js";
import { until, worldsOn } from "./helpers.js";

const git = (dir: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });

/** Every entry under `dir` but .git/, byte for byte: files by content hash and mode, symlinks by target. */
async function bytes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const visit = async (abs: string, rel: string): Promise<void> => {
    for (const name of (await readdir(abs)).sort()) {
      if (name === ".git" || name.startsWith(".afs-")) continue;
      const a = join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = await lstat(a);
      if (st.isSymbolicLink()) out[r] = `-> ${await readlink(a)}`;
      else if (st.isDirectory()) {
        out[r] = "dir";
        await visit(a, r);
      } else out[r] = `${sha256(await readFile(a))} ${(st.mode & 0o777).toString(8)}`;
    }
  };
  await visit(dir, "");
  return out;
}

/** `files` files spread over nested directories, with contents and modes that depend on `variant`. */
async function writeTree(dir: string, variant: string, skip: (i: number) => boolean, files = 400): Promise<void> {
  for (let i = 0; i < files; i++) {
    if (skip(i)) continue;
    const sub = join(dir, `pkg${i % 7}`, `mod${i % 5}`, i % 3 === 0 ? "deep/er" : "");
    await mkdir(sub, { recursive: true });
    const body = Buffer.from(`${variant} file ${i}\n`.repeat(1 + (i % 40)));
    // A few binary files: bytes that are not valid UTF-8.
    if (i % 50 === 0) body[0] = 0xff;
    await writeFile(join(sub, `f${i}.txt`), body, { mode: i % 11 === 0 ? 0o755 : 0o644 });
  }
}

for (const storeName of STORE_NAMES) {
  describe.runIf(storeEnabled(storeName))(`git in a mount on ${storeName}`, () => {
    const fresh = worldsOn(storeName);

    it("a checkout changing hundreds of files converges in the other directory; .git stays local", async () => {
      const w = fresh();
      const a = await w.machine("a");
      const b = await w.machine("b");
      const ws = w.workspace();
      await mkdir(a.dir, { recursive: true });
      git(a.dir, "init", "-q");
      await writeFile(join(a.dir, ".gitignore"), "*.o\n");
      await writeTree(a.dir, "main", (i) => i >= 360);
      git(a.dir, "add", "-A");
      git(a.dir, "commit", "-qm", "main");
      // The other branch: about 200 files modified, 50 deleted (all of pkg6, a whole directory), 35 added.
      git(a.dir, "checkout", "-qb", "other");
      execFileSync("git", ["rm", "-rq", "pkg6"], { cwd: a.dir });
      await writeTree(a.dir, "other", (i) => i % 7 === 6 || (i < 360 && i % 3 === 2));
      git(a.dir, "add", "-A");
      git(a.dir, "commit", "-qm", "other");
      const changed = git(a.dir, "diff", "--name-status", "main", "other").trim().split("\n");
      expect(changed.length).toBeGreaterThanOrEqual(250);
      git(a.dir, "checkout", "-q", "main");
      await writeFile(join(a.dir, "build.o"), "ignored output");

      await w.mount(a, { workspace: ws });
      await w.mount(b, { workspace: ws });
      const main = await bytes(a.dir);
      delete main["build.o"];
      expect(await bytes(b.dir)).toEqual(main);

      const converged = async (want: Record<string, string>): Promise<boolean> =>
        JSON.stringify(await bytes(b.dir).catch(() => ({}))) === JSON.stringify(want);
      for (const branch of ["other", "main", "other"]) {
        git(a.dir, "checkout", "-q", branch);
        const want = await bytes(a.dir);
        delete want["build.o"];
        await until(() => converged(want), `b to converge on ${branch}`, 60_000);
      }
      expect(Object.keys(await bytes(b.dir)).some((p) => p.startsWith("pkg6"))).toBe(false);

      // .git/ and ignored files never leave a's machine.
      const vol = await a.afs.workspaces.volume(ws);
      expect(await vol.stat("/.git")).toBeNull();
      expect(await vol.stat("/build.o")).toBeNull();
      await expect(lstat(join(b.dir, ".git"))).rejects.toMatchObject({ code: "ENOENT" });
      expect(a.mount?.status()).toMatchObject({ conflicts: 0, state: "running" });
      expect(b.mount?.status()).toMatchObject({ conflicts: 0, state: "running" });
      expect(git(a.dir, "status", "--porcelain")).toBe("");
    });
  });
}
