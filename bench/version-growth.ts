// Store growth from keeping versions (issue 19): an editing workload of small changes to source-like
// text files, every version kept (the default 7-day window, after `gc`), measured as bytes stored
// per version in the SQLite store, against the same versions committed to git and packed (`git gc`).
// Also what gc takes back with versioning off (only checkpoints then hold content).
// Run: node --import tsx bench/version-growth.ts [ROUNDS]   (default 40)
//
// Workload: 200 files of ~6 KiB; each round edits 25 distinct files (one line changed, one line
// added) and ends with a checkpoint every 5 rounds, like an agent's turns.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { Afs } from "../src/workspace/afs.js";
import { emitJson, fmtBytes, isMain, makeTempDir, printTable, removeDir } from "./lib.js";

const FILES = 200;
const PER_ROUND = 25;
const DEFAULT_ROUNDS = 40;

function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pathOf = (i: number): string => `/src/mod${i % 8}/file${i}.ts`;

function initialText(i: number, random: () => number): string[] {
  const lines: string[] = [];
  for (let l = 0; lines.join("\n").length < 6000; l++) {
    lines.push(`export function f${i}_${l}(x: number): number { return x * ${Math.floor(random() * 1000)} + ${l}; }`);
  }
  return lines;
}

/** Stored bytes of blob content in the SQLite store (inline values and chunks), as on disk before pages. */
function storedBlobBytes(dbFile: string): number {
  const db = new Database(dbFile, { readonly: true });
  try {
    const inline = db.prepare("SELECT coalesce(sum(length(data)), 0) FROM blobs").pluck().get() as number;
    const hasChunks = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'chunks'").pluck().get();
    const chunks = hasChunks
      ? (db.prepare("SELECT coalesce(sum(length(data)), 0) FROM chunks").pluck().get() as number)
      : 0;
    return inline + chunks;
  } finally {
    db.close();
  }
}

function git(gitDir: string, work: string, args: string[]): string {
  return execFileSync("git", args, {
    env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_WORK_TREE: work, GIT_CONFIG_NOSYSTEM: "1", HOME: work },
    cwd: work,
    encoding: "utf8",
  });
}

function packBytes(gitDir: string): number {
  const dir = join(gitDir, "objects", "pack");
  return readdirSync(dir)
    .filter((n) => n.endsWith(".pack"))
    .reduce((sum, n) => sum + statSync(join(dir, n)).size, 0);
}

export async function main(rounds = DEFAULT_ROUNDS): Promise<void> {
  const work = await makeTempDir("afs-bench-growth-");
  const home = join(work, "home");
  const tree = join(work, "tree");
  const gitDir = join(work, "git");
  const random = prng(19);
  const afs = await Afs.open({ home, actor: "bench", surface: "cli" });
  try {
    await afs.workspaces.create("w");
    const volume = await afs.workspaces.volume("w");
    const texts = Array.from({ length: FILES }, (_, i) => initialText(i, random));
    git(gitDir, work, ["init", "-q"]);
    const put = async (i: number): Promise<void> => {
      const body = `${(texts[i] as string[]).join("\n")}\n`;
      await volume.writeFile(pathOf(i), Buffer.from(body), { op: "write" });
      const file = join(tree, pathOf(i));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, body);
    };
    for (let i = 0; i < FILES; i++) await put(i);
    await afs.checkpoints.create("w", { name: "start" });
    git(gitDir, work, ["add", "-A", "tree"]);
    git(gitDir, work, ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "start"]);
    const base = { afs: storedBlobBytes(join(home, "afs.db")) };

    let versions = 0;
    for (let r = 0; r < rounds; r++) {
      const picked = new Set<number>();
      while (picked.size < PER_ROUND) picked.add(Math.floor(random() * FILES));
      for (const i of picked) {
        const lines = texts[i] as string[];
        const at = Math.floor(random() * lines.length);
        lines[at] = `${lines[at]} // edited in round ${r}`;
        lines.push(`export const added${r}_${i} = ${Math.floor(random() * 1e6)};`);
        await put(i);
        versions++;
      }
      // Every round is a commit in git (each version one blob); afs checkpoints every 5 rounds.
      git(gitDir, work, ["add", "-A", "tree"]);
      git(gitDir, work, ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", `round ${r}`]);
      if (r % 5 === 4) await afs.checkpoints.create("w");
    }
    const gc = await afs.maintenance.gc({ graceMs: 0 });
    const kept = storedBlobBytes(join(home, "afs.db")) - base.afs;
    git(gitDir, work, ["gc", "-q"]);
    const gitPacked = packBytes(gitDir);
    // git's pack holds the start too: subtract a pack of the start alone, made the same way.
    const startDir = join(work, "git-start");
    git(startDir, work, ["init", "-q"]);
    git(gitDir, work, ["checkout", "-q", `HEAD~${rounds}`, "--", "tree"]);
    git(startDir, work, ["add", "-A", "tree"]);
    git(startDir, work, ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "start"]);
    git(startDir, work, ["gc", "-q"]);
    const gitVersions = gitPacked - packBytes(startDir);

    await afs.history.setPolicy("w", { off: true });
    const off = await afs.maintenance.gc({ graceMs: 0 });
    const afterOff = storedBlobBytes(join(home, "afs.db")) - base.afs;

    printTable(
      `store growth from ${versions} versions (${rounds} rounds × ${PER_ROUND} edits of ~6 KiB files)`,
      ["what", "bytes", "per version"],
      [
        ["afs, every version kept (7-day window)", fmtBytes(kept), fmtBytes(Math.round(kept / versions))],
        ["afs, versioning off (checkpoints only)", fmtBytes(afterOff), fmtBytes(Math.round(afterOff / versions))],
        ["git, every version, packed (git gc)", fmtBytes(gitVersions), fmtBytes(Math.round(gitVersions / versions))],
      ],
    );
    console.log(
      `gc kept ${gc.versions_kept} versions for history; with versioning off it deleted ${off.blobs_deleted} blobs`,
    );
    emitJson("version-growth", {
      versions,
      afs_bytes_per_version: Math.round(kept / versions),
      afs_checkpoints_only_bytes_per_version: Math.round(afterOff / versions),
      git_packed_bytes_per_version: Math.round(gitVersions / versions),
    });
  } finally {
    await afs.close();
    await removeDir(work);
  }
}

if (isMain(import.meta.url)) {
  const rounds = process.argv[2] === undefined ? DEFAULT_ROUNDS : Number(process.argv[2]);
  if (!Number.isInteger(rounds) || rounds < 5) {
    console.error("usage: node --import tsx bench/version-growth.ts [ROUNDS (5 or more)]");
    process.exit(2);
  }
  await main(rounds);
}
