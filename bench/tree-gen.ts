// A deterministic generator of a large, realistic tree (default 1,000,000 files, ~2 KiB of text on
// average, ~5,000 directories) for the whole-tree benchmarks and the bounded-memory import test.
// Every file's bytes depend only on (seed, file index), so the same options give the same tree.
// CLI: node --import tsx bench/tree-gen.ts OUTDIR [--files N] [--dirs N] [--seed N] [--small] [--force]
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { mulberry32 } from "./corpus.js";
import { fmtBytes, isMain } from "./lib.js";

export interface TreeGenOptions {
  /** Number of files (default 1,000,000). */
  files?: number;
  /** Number of directories besides the root (default: files / 200, at least 1, at most 5,000). */
  dirs?: number;
  seed?: number;
  /**
   * Every file a short text (16–256 bytes, no binaries or long lines): for tests of what grows with
   * the number of files rather than their bytes, at a fraction of the writing time.
   */
  smallFiles?: boolean;
}

/** A literal planted in exactly `paths.length` files and nowhere else (searches check both ways). */
export interface PlantedLiteral {
  literal: string;
  paths: string[];
}

export interface TreeInfo {
  version: number;
  files: number;
  smallFiles: boolean;
  dirs: number;
  seed: number;
  bytes: number;
  binaries: number;
  longLineFiles: number;
  /** The directory with the most files (for `ls`-style benchmarks), workspace-style path. */
  bigDir: string;
  bigDirFiles: number;
  /** A word present in many files (for `-c` counting benchmarks); counted case-sensitively. */
  common: { literal: string; files: number };
  rare: PlantedLiteral[];
  /** Extensions in the tree with their file counts (for `file_glob` / `find -name` benchmarks). */
  extensions: Record<string, number>;
  ms: number;
}

const FORMAT_VERSION = 1;
export const TREE_DEFAULT_SEED = 0x7ee5;

/** Counts of the planted literals; none can arise from the word list ("qqplant" is in no list). */
const RARE_COUNTS: ReadonlyArray<readonly [string, number]> = [
  ["QQPLANT_SOLO_5b1e", 1],
  ["qqplant_trio_h7w", 3],
  ["QqPlantForty_m3", 40],
  ["qqplant_thousand_z8", 1000],
];
const COMMON_LITERAL = "checkpoint";

const WORDS = (
  "user account buffer cache config context data event file handler index item key list manager message " +
  "node option parser path queue record request response result route schema session state stream table " +
  "task token tree value worker client server query update create delete load save read write parse format " +
  "build render validate resolve fetch sync merge split count size offset limit batch entry block chunk frame " +
  "packet signal timer retry error status version field model view store logger metric filter sort group " +
  "owner policy scope profile target source snapshot commit branch remote local global default pending " +
  "the a of to and in is it that for on with as was by at from this be or are not have has which will can"
).split(" ");
const DIR_WORDS = (
  "src lib core utils api internal pkg cmd docs test fixtures components services models handlers config " +
  "scripts tools vendor examples server client common storage net auth db cache ui assets templates plugins"
).split(" ");
const TEXT_EXTS = ["ts", "js", "py", "go", "md", "json", "txt", "rs", "c", "yaml"] as const;

/** A shared pool of text lines; each file copies a run of them behind its own header. */
function buildPool(seed: number): string[] {
  const rnd = mulberry32(seed ^ 0x9e3779b9);
  const lines: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const indent = "  ".repeat(Math.floor(rnd() * 4));
    const n = 2 + Math.floor(rnd() * 12);
    const words: string[] = [];
    for (let w = 0; w < n; w++) {
      let word = WORDS[Math.floor(rnd() * WORDS.length)] as string;
      // The common literal must only come from the planted lines below, so files can be counted.
      if (word === COMMON_LITERAL) word = "chkpt";
      words.push(word);
    }
    if (i % 97 === 0) words.push(COMMON_LITERAL);
    lines.push(`${indent}${words.join(rnd() < 0.5 ? " " : "_")}${rnd() < 0.3 ? ";" : ""}\n`);
  }
  return lines;
}

/** Directory paths (relative, `/`-separated), nested 1–6 deep; index 0 is the big flat directory. */
function planDirs(count: number, rnd: () => number): string[] {
  const dirs: string[] = ["bigdir"];
  const taken = new Set(dirs);
  while (dirs.length < count) {
    // A parent among the directories made so far (not the flat one), or the root: a bushy tree.
    const parentIdx = dirs.length < 8 || rnd() < 0.15 ? -1 : 1 + Math.floor(rnd() * (dirs.length - 1));
    const parent = parentIdx < 0 ? "" : (dirs[parentIdx] as string);
    if (parent.split("/").length >= 6) continue;
    const name = `${DIR_WORDS[Math.floor(rnd() * DIR_WORDS.length)]}${Math.floor(rnd() * 1000)}`;
    const path = parent ? `${parent}/${name}` : name;
    if (taken.has(path)) continue;
    taken.add(path);
    dirs.push(path);
  }
  return dirs;
}

const hashIndex = (seed: number, i: number): number => {
  let h = (seed ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};

interface Plan {
  dirs: string[];
  /** Directory index of every file. */
  dirOf: Uint32Array;
  /** File index → rare literal indices planted in it. */
  planted: Map<number, number[]>;
  bigDirFiles: number;
}

function plan(files: number, dirCount: number, seed: number): Plan {
  const rnd = mulberry32(seed);
  const dirs = planDirs(dirCount, rnd);
  const dirOf = new Uint32Array(files);
  // The flat directory holds 1% of the files (at most 20,000): big enough for listing benchmarks.
  const bigDirFiles = Math.min(20_000, Math.max(1, Math.floor(files / 100)));
  for (let i = 0; i < files; i++) {
    if (i < bigDirFiles || dirs.length === 1) dirOf[i] = 0;
    // Skewed: low-numbered directories are fuller, like real trees (a few src/ dirs, many small ones).
    else dirOf[i] = 1 + Math.floor((dirs.length - 1) * rnd() ** 1.6);
  }
  const planted = new Map<number, number[]>();
  RARE_COUNTS.forEach(([, count], r) => {
    const chosen = new Set<number>();
    while (chosen.size < Math.min(count, files)) chosen.add(Math.floor(rnd() * files));
    for (const i of chosen) planted.set(i, [...(planted.get(i) ?? []), r]);
  });
  return { dirs, dirOf, planted, bigDirFiles };
}

interface FileOut {
  name: string;
  bytes: Buffer;
  kind: "text" | "long" | "binary";
  common: boolean;
}

function makeFile(
  i: number,
  seed: number,
  pool: readonly string[],
  plantedHere: readonly number[] | undefined,
  small: boolean,
): FileOut {
  const rnd = mulberry32(hashIndex(seed, i));
  // Small trees take their roll from the text-only middle: no binaries, no long lines.
  const roll = small ? 0.5 : rnd();
  const word = WORDS[Math.floor(rnd() * WORDS.length)] as string;
  if (roll < 0.005 && !plantedHere) {
    // Binaries: random bytes with NULs, 1–64 KiB.
    const size = 1024 + Math.floor(rnd() * 63 * 1024);
    const bytes = Buffer.allocUnsafe(size);
    for (let o = 0; o < size; o += 4) bytes.writeUInt32LE(Math.floor(rnd() * 4294967296), Math.min(o, size - 4));
    bytes[0] = 0;
    return { name: `${word}_${i}.bin`, bytes, kind: "binary", common: false };
  }
  const ext = TEXT_EXTS[Math.floor(rnd() * TEXT_EXTS.length)] as string;
  // Log-uniform 64 B – 9 KB: mean ~1.8 KiB (~2 KiB with the long lines and binaries), many small files and a tail, as in source trees.
  const target = small
    ? 16 + Math.floor(rnd() * 240)
    : Math.floor(Math.exp(Math.log(64) + rnd() * (Math.log(9_000) - Math.log(64))));
  const parts: string[] = [`// file ${i} ${word}\n`];
  let size = parts[0]?.length ?? 0;
  let line = Math.floor(rnd() * pool.length);
  while (size < target) {
    const l = pool[line] as string;
    parts.push(l);
    size += l.length;
    line = (line + 1) % pool.length;
  }
  const long = roll > 0.995;
  if (long) {
    // One long line (8–64 KiB, no newline inside), as in minified bundles and data files.
    const n = 8 * 1024 + Math.floor(rnd() * 56 * 1024);
    parts.push(`${"x=".padEnd(n, "abcdefghij")}\n`);
  }
  if (plantedHere) for (const r of plantedHere) parts.push(`const marker = "${RARE_COUNTS[r]?.[0]}";\n`);
  const text = parts.join("");
  const common = text.includes(COMMON_LITERAL);
  return { name: `${word}_${i}.${ext}`, bytes: Buffer.from(text), kind: long ? "long" : "text", common };
}

/** Writes the tree under `dir` (created; must be empty or absent) and returns its facts. */
export async function generateTree(dir: string, options: TreeGenOptions = {}): Promise<TreeInfo> {
  const start = performance.now();
  const files = options.files ?? 1_000_000;
  const seed = options.seed ?? TREE_DEFAULT_SEED;
  const dirCount = options.dirs ?? Math.min(5000, Math.max(1, Math.floor(files / 200)));
  const p = plan(files, dirCount, seed);
  const pool = buildPool(seed);
  mkdirSync(dir, { recursive: true });
  for (const d of p.dirs) mkdirSync(join(dir, d), { recursive: true });

  const rare: PlantedLiteral[] = RARE_COUNTS.map(([literal]) => ({ literal, paths: [] }));
  const extensions: Record<string, number> = {};
  let bytes = 0;
  let binaries = 0;
  let longLineFiles = 0;
  let commonFiles = 0;
  for (let i = 0; i < files; i++) {
    const plantedHere = p.planted.get(i);
    const f = makeFile(i, seed, pool, plantedHere, options.smallFiles === true);
    const rel = `${p.dirs[p.dirOf[i] as number]}/${f.name}`;
    bytes += f.bytes.length;
    if (f.kind === "binary") binaries++;
    if (f.kind === "long") longLineFiles++;
    if (f.common) commonFiles++;
    const ext = f.name.slice(f.name.lastIndexOf(".") + 1);
    extensions[ext] = (extensions[ext] ?? 0) + 1;
    if (plantedHere) for (const r of plantedHere) rare[r]?.paths.push(`/${rel}`);
    writeFileSync(join(dir, rel), f.bytes);
  }
  for (const r of rare) r.paths.sort();
  return {
    version: FORMAT_VERSION,
    files,
    smallFiles: options.smallFiles === true,
    dirs: p.dirs.length,
    seed,
    bytes,
    binaries,
    longLineFiles,
    bigDir: `/${p.dirs[0]}`,
    bigDirFiles: p.bigDirFiles,
    common: { literal: COMMON_LITERAL, files: commonFiles },
    rare,
    extensions,
    ms: Math.round(performance.now() - start),
  };
}

/** The facts file kept beside (not inside) a generated tree, so imports never see it. */
export const infoPath = (dir: string): string => join(dirname(dir), `${dir.split("/").pop()}.tree-gen.json`);

/**
 * The tree at `dir` with these options: reused when a previous run left its facts file with the
 * same options, regenerated (after removing `dir`) otherwise.
 */
export async function ensureTree(dir: string, options: TreeGenOptions = {}, force = false): Promise<TreeInfo> {
  const files = options.files ?? 1_000_000;
  const seed = options.seed ?? TREE_DEFAULT_SEED;
  const facts = infoPath(dir);
  if (!force && existsSync(facts) && existsSync(dir)) {
    const old = JSON.parse(readFileSync(facts, "utf8")) as TreeInfo;
    const same = old.version === FORMAT_VERSION && old.files === files && old.seed === seed;
    if (same && old.smallFiles === (options.smallFiles === true)) {
      if (options.dirs === undefined || old.dirs === options.dirs) return old;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(facts, { force: true });
  const info = await generateTree(dir, options);
  writeFileSync(facts, `${JSON.stringify(info, null, 1)}\n`);
  return info;
}

/** Removes a generated tree and its facts file. */
export function removeTree(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  rmSync(infoPath(dir), { force: true });
}

function parseArgs(argv: readonly string[]): { dir: string; options: TreeGenOptions; force: boolean } {
  const options: TreeGenOptions = {};
  let dir = "";
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const num = (): number => {
      const v = Number((argv[++i] ?? "").replaceAll("_", ""));
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a} needs a positive integer`);
      return v;
    };
    if (a === "--files") options.files = num();
    else if (a === "--dirs") options.dirs = num();
    else if (a === "--seed") options.seed = num();
    else if (a === "--force") force = true;
    else if (a === "--small") options.smallFiles = true;
    else if (!a.startsWith("--") && !dir) dir = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!dir)
    throw new Error(
      "usage: node --import tsx bench/tree-gen.ts OUTDIR [--files N] [--dirs N] [--seed N] [--small] [--force]",
    );
  return { dir, options, force };
}

if (isMain(import.meta.url)) {
  const { dir, options, force } = parseArgs(process.argv.slice(2));
  const info = await ensureTree(dir, options, force);
  console.log(
    `${dir}: ${info.files} files, ${info.dirs} directories, ${fmtBytes(info.bytes)}, ` +
      `${info.binaries} binaries, ${info.longLineFiles} long-line files, written in ${info.ms} ms; facts in ${infoPath(dir)}`,
  );
}
