// Deterministic benchmark corpora: a realistic source-like tree (4,000 files, ~31.5 MiB, nested
// 1–5 deep, code and prose, a few duplicates and rare literals for search benchmarks) and a
// fixed-fan-out tree of small files for scale tests. Seeded PRNG only: same seed, same bytes.
// CLI: node --import tsx bench/corpus.ts OUTDIR [--seed N]
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { emitJson, fmtBytes, isMain, printTable } from "./lib.js";

export const CORPUS_FILES = 4000;
export const CORPUS_BYTES = 31.5 * 1024 * 1024;
export const DEFAULT_SEED = 0x5eed2;
const MAX_DEPTH = 5;

// --- the PRNG ----------------------------------------------------------------------------

/** mulberry32: a tiny, fast, well-mixed 32-bit PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Log-uniform in [lo, hi]: many small values, a long tail of large ones. */
  logUniform(lo: number, hi: number): number {
    return Math.exp(Math.log(lo) + this.next() * (Math.log(hi) - Math.log(lo)));
  }
  /** `count` distinct items, in draw order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = [...items];
    const out: T[] = [];
    while (out.length < count && pool.length > 0)
      out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0] as T);
    return out;
  }
}

// --- word lists --------------------------------------------------------------------------

const CODE_WORDS = (
  "user account buffer cache config context data event file handler index item key list manager message " +
  "node option parser path queue record request response result route schema session state stream table " +
  "task token tree value worker client server query update create delete load save read write parse format " +
  "build render validate resolve fetch sync merge split count size offset limit batch entry block chunk frame " +
  "packet signal timer retry error status version field model view store logger metric filter sort group " +
  "owner policy scope profile target source snapshot commit branch remote local global default pending"
).split(" ");

const TYPES = "string number boolean Buffer Map Set Promise Result Option Vec u64 i32 int64 float bytes".split(" ");

const PROSE_WORDS = (
  "the a an of to and in is it that for on with as was by at from this be or are not have has had which " +
  "will can would should could may must each every other some any all most many few more less new old " +
  "first last next previous same different simple complex small large fast slow early late clear open " +
  "system file directory workspace checkpoint change history agent tool process request result version " +
  "reader writer user team project design note example section chapter detail reason problem answer " +
  "build test release deploy measure compare improve describe explain follow keep move copy store share " +
  "because although while when where after before during between within without across through over " +
  "café naïve résumé façade coöperate über jalapeño Straße déjà-vu piñata smörgåsbord crème brûlée"
).split(" ");

const DIR_NAMES = (
  "src lib core utils api internal pkg cmd docs test tests fixtures components services models handlers " +
  "config scripts tools vendor examples server client common storage net auth db cache ui i18n assets " +
  "templates migrations plugins adapters protocol parser runtime engine"
).split(" ");

// --- rare literals (search benchmarks look for these) ------------------------------------

export interface RareLiteral {
  literal: string;
  /** How many files contain it, case-sensitively. */
  count: number;
  note: string;
}

/** None of these can arise from the word lists ("zzrare" is in no list), so counts are exact. */
export const RARE_LITERALS: readonly RareLiteral[] = [
  { literal: "ZZRARE_SOLO_7f3a", count: 1, note: "exactly one file" },
  { literal: "zzrare_trio_k9q", count: 3, note: "exactly three files (lower case)" },
  {
    literal: "ZZRARE_TRIO_K9Q",
    count: 1,
    note: "upper-case variant of the trio token: a case-insensitive search finds 4",
  },
  { literal: "ZzRareForty_x2", count: 40, note: "exactly forty files" },
  { literal: "zzrare_ünïcödé_ß", count: 2, note: "non-ASCII token in exactly two files" },
  { literal: "the zzrare heron sleeps at noon", count: 5, note: "multi-word phrase in exactly five files" },
];

// --- the tree ----------------------------------------------------------------------------

type Kind = "ts" | "js" | "py" | "go" | "rs" | "c" | "h" | "java" | "md" | "txt" | "json" | "yaml";

const KIND_WEIGHTS: ReadonlyArray<[Kind, number]> = [
  ["ts", 25],
  ["js", 10],
  ["py", 12],
  ["go", 10],
  ["rs", 6],
  ["c", 4],
  ["h", 2],
  ["java", 4],
  ["md", 12],
  ["txt", 5],
  ["json", 6],
  ["yaml", 4],
];

interface Planned {
  /** Relative path, `/`-separated. */
  rel: string;
  kind: Kind | "license" | "empty" | "editorconfig";
  /** Target size in bytes (set after scaling for variable-size files). */
  size: number;
  variable: boolean;
  /** Index of the file this one duplicates byte for byte. */
  copyOf?: number;
  literals: string[];
}

export interface CorpusOptions {
  seed?: number;
  /** Number of files (default 4,000). */
  files?: number;
  /** Total bytes (default 31.5 MiB); hit exactly. */
  totalBytes?: number;
}

export interface CorpusInfo {
  dir: string;
  seed: number;
  files: number;
  bytes: number;
  dirs: number;
  /** Files per directory depth (0 = top level). */
  filesByDepth: number[];
  byExtension: Record<string, number>;
  largest: { path: string; bytes: number };
  /** Distinct contents: what a content-addressed store should hold after importing the corpus. */
  uniqueBlobs: number;
  uniqueBytes: number;
  /** Every rare literal with the files (workspace paths) that contain it. */
  rare: Array<RareLiteral & { files: string[] }>;
}

function pickKind(rng: Rng): Kind {
  const total = KIND_WEIGHTS.reduce((n, [, w]) => n + w, 0);
  let r = rng.float() * total;
  for (const [kind, w] of KIND_WEIGHTS) {
    r -= w;
    if (r < 0) return kind;
  }
  return "ts";
}

function uniqueName(taken: Set<string>, base: string, ext: string): string {
  let name = `${base}${ext}`;
  for (let n = 2; taken.has(name); n++) name = `${base}${n}${ext}`;
  taken.add(name);
  return name;
}

const camel = (words: readonly string[]): string =>
  words.map((w, i) => (i === 0 ? w : (w[0] ?? "").toUpperCase() + w.slice(1))).join("");

function fileBase(rng: Rng, kind: Kind): string {
  const words = [rng.pick(CODE_WORDS), ...(rng.chance(0.6) ? [rng.pick(CODE_WORDS)] : [])];
  if (kind === "py" || kind === "rs" || kind === "c" || kind === "h") return words.join("_");
  if (kind === "go") return words.join("");
  if (kind === "java") return camel(words).replace(/^./, (c) => c.toUpperCase());
  if (kind === "md" || kind === "txt") return words.join("-");
  return camel(words);
}

/** Directories (relative paths, depth 1–5) and the planned files with their target sizes. */
function planTree(rng: Rng, fileCount: number, totalBytes: number): { dirs: string[]; files: Planned[] } {
  // Directories: each new one hangs under a random existing directory that is not yet 5 deep.
  const dirs: Array<{ rel: string; depth: number; names: Set<string> }> = [];
  const rootNames = new Set<string>();
  const dirCount = Math.max(8, Math.round(fileCount / 12));
  for (const name of rng.sample(DIR_NAMES, 8)) {
    rootNames.add(name);
    dirs.push({ rel: name, depth: 1, names: new Set() });
  }
  while (dirs.length < dirCount) {
    const parent = rng.pick(dirs.filter((d) => d.depth < MAX_DEPTH));
    const name = uniqueName(parent.names, rng.pick(DIR_NAMES), "");
    dirs.push({ rel: `${parent.rel}/${name}`, depth: parent.depth + 1, names: new Set() });
  }

  const files: Planned[] = [];
  const add = (dir: (typeof dirs)[number] | null, base: string, ext: string, p: Omit<Planned, "rel" | "literals">) => {
    const taken = dir ? dir.names : rootNames;
    const name = uniqueName(taken, base, ext);
    files.push({ ...p, rel: dir ? `${dir.rel}/${name}` : name, literals: [] });
  };
  // Duplicates a real tree has: licence copies, empty package markers, shared editor settings.
  const fixed = Math.min(24, Math.floor(fileCount / 10));
  for (let i = 0; i < fixed; i++) {
    const dir = rng.pick(dirs);
    if (i % 3 === 0) add(dir, "LICENSE", "", { kind: "license", size: 0, variable: false });
    else if (i % 3 === 1) add(dir, "__init__", ".py", { kind: "empty", size: 0, variable: false });
    else add(dir, ".editorconfig", "", { kind: "editorconfig", size: 0, variable: false });
  }
  add(null, "README", ".md", { kind: "md", size: 0, variable: true });
  const large = Math.max(1, Math.round(fileCount / 200));
  while (files.length < fileCount) {
    const dir = rng.pick(dirs);
    const kind = files.length - fixed <= large ? rng.pick<Kind>(["json", "txt", "js", "md"]) : pickKind(rng);
    add(dir, fileBase(rng, kind), `.${kind}`, { kind, size: 0, variable: true });
  }

  // A few vendored copies: variable files duplicated elsewhere under another directory.
  const variable = files.map((f, i) => (f.variable ? i : -1)).filter((i) => i >= 0);
  const copies = Math.min(4, Math.floor(variable.length / 20));
  const drawn = rng.sample(variable.slice(large + 1), copies * 2);
  const [copyTargets, copySources] = [drawn.slice(0, copies), drawn.slice(copies)];
  copyTargets.forEach((target, i) => {
    const t = files[target] as Planned;
    t.variable = false;
    t.copyOf = copySources[i];
  });

  // Sizes: ~3% under 1 KiB, most 1–20 KiB log-uniform, the first `large` files 64 KiB–1 MiB.
  const raw = files.map((f, i) => {
    if (!f.variable) return 0;
    const v = i - fixed;
    if (v >= 1 && v <= large) return rng.logUniform(64 * 1024, 1024 * 1024);
    if (rng.chance(0.03)) return rng.int(60, 1023);
    return rng.logUniform(1024, 20 * 1024);
  });
  const fixedBytes = files.reduce((n, f) => n + fixedSize(f.kind), 0);
  const weight = files.map(() => 1);
  for (const f of files) if (f.copyOf !== undefined) weight[f.copyOf] = (weight[f.copyOf] as number) + 1;
  const scaledTotal = raw.reduce((n, r, i) => n + r * (weight[i] as number), 0);
  const scale = (totalBytes - fixedBytes) / scaledTotal;
  files.forEach((f, i) => {
    f.size = f.variable ? Math.max(1, Math.round((raw[i] as number) * scale)) : fixedSize(f.kind);
  });
  for (const f of files) if (f.copyOf !== undefined) f.size = (files[f.copyOf] as Planned).size;
  // Rounding drift goes to the largest variable file that nothing copies, so the total is exact.
  const drift = totalBytes - files.reduce((n, f) => n + f.size, 0);
  const sink = files.filter((f, i) => f.variable && weight[i] === 1).reduce((a, b) => (b.size > a.size ? b : a));
  sink.size += drift;

  // Rare literals go into distinct files of at least 1 KiB that are neither copies nor copied.
  const eligible = files.filter((f, i) => f.variable && weight[i] === 1 && f.size >= 1024 && f.kind !== "json");
  const needed = RARE_LITERALS.reduce((n, l) => n + l.count, 0);
  const chosen = rng.sample(eligible, needed);
  let next = 0;
  for (const lit of RARE_LITERALS)
    for (let i = 0; i < lit.count; i++) (chosen[next++] as Planned).literals.push(lit.literal);

  return { dirs: dirs.map((d) => d.rel), files };
}

function fixedSize(kind: Planned["kind"]): number {
  if (kind === "license") return Buffer.byteLength(LICENSE);
  if (kind === "editorconfig") return Buffer.byteLength(EDITORCONFIG);
  return 0;
}

const LICENSE = `MIT License

Copyright (c) 2024 The Benchmark Corpus Authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.
`;

const EDITORCONFIG = `root = true

[*]
indent_style = space
indent_size = 2
end_of_line = lf
charset = utf-8
trim_trailing_whitespace = true
insert_final_newline = true
`;

// --- content -----------------------------------------------------------------------------

interface Lang {
  comment: string;
  fn: (name: string, params: string[], type: string) => string;
  local: (id: string, expr: string) => string;
  open: string;
  close: string;
  indent: string;
  header: (rng: Rng) => string;
}

const BRACE: Omit<Lang, "fn" | "local" | "header"> = { comment: "//", open: " {", close: "}", indent: "  " };

const LANGS: Record<"ts" | "js" | "py" | "go" | "rs" | "c" | "java", Lang> = {
  ts: {
    ...BRACE,
    fn: (n, p, t) => `export function ${n}(${p.map((x) => `${x}: ${t}`).join(", ")}): ${t}`,
    local: (id, e) => `const ${id} = ${e};`,
    header: (rng) =>
      `import { ${camel([rng.pick(CODE_WORDS), rng.pick(CODE_WORDS)])} } from "./${rng.pick(CODE_WORDS)}.js";`,
  },
  js: {
    ...BRACE,
    fn: (n, p) => `function ${n}(${p.join(", ")})`,
    local: (id, e) => `let ${id} = ${e};`,
    header: (rng) => `const ${rng.pick(CODE_WORDS)} = require("./${rng.pick(CODE_WORDS)}");`,
  },
  py: {
    comment: "#",
    open: ":",
    close: "",
    indent: "    ",
    fn: (n, p) => `def ${n}(${p.join(", ")})`,
    local: (id, e) => `${id} = ${e}`,
    header: (rng) => `from .${rng.pick(CODE_WORDS)} import ${rng.pick(CODE_WORDS)}_${rng.pick(CODE_WORDS)}`,
  },
  go: {
    ...BRACE,
    indent: "\t",
    fn: (n, p, t) => `func ${n}(${p.map((x) => `${x} ${t}`).join(", ")}) (${t}, error)`,
    local: (id, e) => `${id} := ${e}`,
    header: (rng) => `package ${rng.pick(CODE_WORDS)}\n\nimport "${rng.pick(CODE_WORDS)}/${rng.pick(CODE_WORDS)}"`,
  },
  rs: {
    ...BRACE,
    indent: "    ",
    fn: (n, p, t) => `pub fn ${n}(${p.map((x) => `${x}: ${t}`).join(", ")}) -> ${t}`,
    local: (id, e) => `let ${id} = ${e};`,
    header: (rng) => `use crate::${rng.pick(CODE_WORDS)}::${rng.pick(CODE_WORDS)};`,
  },
  c: {
    ...BRACE,
    indent: "    ",
    fn: (n, p) => `static int ${n}(${p.map((x) => `int ${x}`).join(", ")})`,
    local: (id, e) => `int ${id} = ${e};`,
    header: (rng) => `#include "${rng.pick(CODE_WORDS)}.h"`,
  },
  java: {
    ...BRACE,
    indent: "    ",
    fn: (n, p, t) => `public ${t} ${n}(${p.map((x) => `${t} ${x}`).join(", ")})`,
    local: (id, e) => `var ${id} = ${e};`,
    header: (rng) => `package com.${rng.pick(CODE_WORDS)}.${rng.pick(CODE_WORDS)};`,
  },
};

const ident = (rng: Rng): string => camel([rng.pick(CODE_WORDS), rng.pick(CODE_WORDS)]);

function sentence(rng: Rng, min = 6, max = 18): string {
  const words = Array.from({ length: rng.int(min, max) }, () => rng.pick(PROSE_WORDS));
  const first = words[0] ?? "the";
  words[0] = (first[0] ?? "").toUpperCase() + first.slice(1);
  return `${words.join(" ")}.`;
}

function expr(rng: Rng): string {
  switch (rng.int(0, 4)) {
    case 0:
      return `${ident(rng)}(${ident(rng)}, ${rng.int(0, 4096)})`;
    case 1:
      return `${ident(rng)}.${rng.pick(CODE_WORDS)} + ${rng.int(1, 64)}`;
    case 2:
      return `"${rng.pick(CODE_WORDS)}-${rng.pick(CODE_WORDS)}"`;
    case 3:
      return `${ident(rng)} ${rng.pick(["*", "-", "%", "/"])} ${rng.int(2, 100)}`;
    default:
      return `${rng.pick(CODE_WORDS)}[${rng.int(0, 31)}]`;
  }
}

/** Appends one function-sized chunk of code in language `lang`. */
function codeChunk(rng: Rng, lang: Lang, out: string[]): void {
  const i1 = lang.indent;
  const i2 = i1 + i1;
  if (rng.chance(0.5)) out.push(`${lang.comment} ${sentence(rng)}`);
  const params = Array.from({ length: rng.int(0, 3) }, () => ident(rng));
  out.push(lang.fn(ident(rng), params, rng.pick(TYPES)) + lang.open);
  for (let s = rng.int(2, 8); s > 0; s--) {
    const id = ident(rng);
    out.push(i1 + lang.local(id, expr(rng)));
    if (rng.chance(0.3)) {
      out.push(
        `${i1}if ${lang.open === ":" ? "" : "("}${id} > ${rng.int(0, 99)}${lang.open === ":" ? "" : ")"}${lang.open}`,
      );
      out.push(`${i2}return ${expr(rng)}${lang.open === ":" ? "" : ";"}`);
      if (lang.close) out.push(i1 + lang.close);
    }
    if (rng.chance(0.15)) out.push(`${i1}${lang.comment} ${sentence(rng, 4, 10)}`);
  }
  out.push(`${i1}return ${expr(rng)}${lang.open === ":" ? "" : ";"}`);
  if (lang.close) out.push(lang.close);
  out.push("");
}

function proseChunk(rng: Rng, markdown: boolean, out: string[]): void {
  if (markdown && rng.chance(0.3)) out.push(`## ${sentence(rng, 2, 5).slice(0, -1)}`, "");
  if (markdown && rng.chance(0.15)) {
    out.push("```", `${ident(rng)}(${rng.int(0, 9)})`, "```", "");
    return;
  }
  if (markdown && rng.chance(0.2)) {
    for (let i = rng.int(2, 5); i > 0; i--) out.push(`- ${sentence(rng, 3, 9)}`);
    out.push("");
    return;
  }
  const sentences = Array.from({ length: rng.int(2, 6) }, () => sentence(rng));
  // Wrap at ~100 columns like hand-written text.
  let line = "";
  for (const word of sentences.join(" ").split(" ")) {
    if (line.length + word.length > 100) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  out.push(line, "");
}

function dataChunk(rng: Rng, kind: "json" | "yaml", out: string[], first: boolean): void {
  const key = `${rng.pick(CODE_WORDS)}_${rng.pick(CODE_WORDS)}`;
  const fields = Array.from(
    { length: rng.int(2, 6) },
    () =>
      [ident(rng), rng.chance(0.5) ? rng.int(0, 1e6) : `${rng.pick(PROSE_WORDS)} ${rng.pick(PROSE_WORDS)}`] as const,
  );
  if (kind === "yaml") {
    out.push(`${key}:`, ...fields.map(([k, v]) => `  ${k}: ${typeof v === "number" ? v : JSON.stringify(v)}`));
    return;
  }
  const body = fields.map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(",\n");
  out.push(`${first ? "" : ","}  ${JSON.stringify(key)}: {\n${body}\n  }`);
}

function literalLine(kind: Planned["kind"], literal: string): string {
  if (kind === "py" || kind === "yaml") return `# ${literal}`;
  if (kind === "md" || kind === "txt") return `Note: ${literal}.`;
  return `// ${literal}`;
}

/** Text of exactly `size` bytes (UTF-8, never a cut character) for a planned file. */
function render(rng: Rng, f: Planned): Buffer {
  if (f.kind === "license") return Buffer.from(LICENSE);
  if (f.kind === "editorconfig") return Buffer.from(EDITORCONFIG);
  if (f.kind === "empty" || f.size === 0) return Buffer.alloc(0);
  const kind = f.kind;
  const out: string[] = [];
  const lang = kind in LANGS ? LANGS[kind as keyof typeof LANGS] : kind === "h" ? LANGS.c : null;
  if (lang) out.push(lang.header(rng));
  else if (kind === "md") out.push(`# ${sentence(rng, 2, 6).slice(0, -1)}`);
  else if (kind === "json") out.push("{");
  for (const lit of f.literals) out.push(literalLine(kind, lit));
  out.push("");
  let chars = out.reduce((n, l) => n + l.length + 1, 0);
  while (chars < f.size) {
    const before = out.length;
    if (lang) codeChunk(rng, lang, out);
    else if (kind === "json" || kind === "yaml") dataChunk(rng, kind, out, out.length === 2);
    else proseChunk(rng, kind === "md", out);
    for (let i = before; i < out.length; i++) chars += (out[i] as string).length + 1;
  }
  return fitBytes(Buffer.from(out.join("\n")), f.size);
}

/** Cuts to exactly `size` bytes without splitting a UTF-8 character, ending in a newline. */
function fitBytes(buf: Buffer, size: number): Buffer {
  let end = size;
  while (end > 0 && end < buf.length && ((buf[end] as number) & 0xc0) === 0x80) end--;
  const out = Buffer.alloc(size, 0x20);
  buf.copy(out, 0, 0, end);
  if (size > 0 && (out[size - 1] as number) < 0x80) out[size - 1] = 0x0a;
  return out;
}

// --- generators --------------------------------------------------------------------------

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/** Writes the corpus into `dir` (created; must be empty) and describes what it wrote. */
export function generateCorpus(dir: string, options: CorpusOptions = {}): CorpusInfo {
  const seed = options.seed ?? DEFAULT_SEED;
  const fileCount = options.files ?? CORPUS_FILES;
  const totalBytes = options.totalBytes ?? CORPUS_BYTES;
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0)
    throw new Error(`${dir} is not empty; the corpus goes into a new or empty directory`);

  const rng = new Rng(seed);
  const { dirs, files } = planTree(rng, fileCount, totalBytes);
  for (const d of dirs) mkdirSync(join(dir, ...d.split("/")), { recursive: true });

  const contents: Buffer[] = [];
  files.forEach((f, i) => {
    contents[i] = f.copyOf === undefined ? render(rng, f) : Buffer.alloc(0);
  });
  files.forEach((f, i) => {
    if (f.copyOf !== undefined) contents[i] = contents[f.copyOf] as Buffer;
  });

  const unique = new Map<string, number>();
  const filesByDepth: number[] = [];
  const byExtension: Record<string, number> = {};
  let bytes = 0;
  let largest = { path: "", bytes: -1 };
  files.forEach((f, i) => {
    const data = contents[i] as Buffer;
    if (data.length !== f.size) throw new Error(`corpus bug: ${f.rel} has ${data.length} bytes, planned ${f.size}`);
    writeFileSync(join(dir, ...f.rel.split("/")), data);
    bytes += data.length;
    unique.set(sha256(data), data.length);
    const depth = f.rel.split("/").length - 1;
    filesByDepth[depth] = (filesByDepth[depth] ?? 0) + 1;
    const dot = f.rel.lastIndexOf(".");
    const ext = dot > f.rel.lastIndexOf("/") + 1 ? f.rel.slice(dot) : "(none)";
    byExtension[ext] = (byExtension[ext] ?? 0) + 1;
    if (data.length > largest.bytes) largest = { path: `/${f.rel}`, bytes: data.length };
  });

  // The facts search benchmarks rely on are checked against the bytes actually written.
  const rare = RARE_LITERALS.map((lit) => {
    const found = files.filter((_, i) => (contents[i] as Buffer).includes(lit.literal)).map((f) => `/${f.rel}`);
    if (found.length !== lit.count) {
      throw new Error(`corpus bug: ${JSON.stringify(lit.literal)} is in ${found.length} files, expected ${lit.count}`);
    }
    return { ...lit, files: found.sort() };
  });

  return {
    dir,
    seed,
    files: files.length,
    bytes,
    dirs: dirs.length,
    filesByDepth: Array.from(filesByDepth, (n) => n ?? 0),
    byExtension,
    largest,
    uniqueBlobs: unique.size,
    uniqueBytes: [...unique.values()].reduce((n, s) => n + s, 0),
    rare,
  };
}

export interface SmallFilesInfo {
  dir: string;
  files: number;
  /** Leaf directories (each holds up to filesPerDir files). */
  leafDirs: number;
  /** Directory levels above the files. */
  levels: number;
  bytes: number;
  /** Workspace path of the last file of the last leaf: the deepest, rightmost file. */
  deepest: string;
}

/**
 * Writes `count` small files into `dir`: leaf directories of `filesPerDir` files, nested
 * `fanout`-wide (d0…d9/d0…d9/…) as deep as needed. Contents are distinct and deterministic.
 */
export function generateSmallFiles(dir: string, count: number, filesPerDir = 100, fanout = 10): SmallFilesInfo {
  const leafDirs = Math.ceil(count / filesPerDir);
  let levels = 1;
  for (let cap = fanout; cap < leafDirs; cap *= fanout) levels++;
  const rng = new Rng(count);
  let bytes = 0;
  let deepest = "";
  for (let d = 0; d < leafDirs; d++) {
    const parts: string[] = [];
    for (let l = 0, n = d; l < levels; l++, n = Math.floor(n / fanout)) parts.unshift(`d${n % fanout}`);
    const leaf = join(dir, ...parts);
    mkdirSync(leaf, { recursive: true });
    const inThis = Math.min(filesPerDir, count - d * filesPerDir);
    for (let f = 0; f < inThis; f++) {
      const lines = [`fixture ${d}.${f}`];
      for (let k = rng.int(1, 4); k > 0; k--)
        lines.push(`${rng.pick(CODE_WORDS)} ${rng.pick(PROSE_WORDS)} ${rng.int(0, 1e9)}`);
      const data = Buffer.from(`${lines.join("\n")}\n`);
      writeFileSync(join(leaf, `f${f}.txt`), data);
      bytes += data.length;
      deepest = `/${[...parts, `f${f}.txt`].join("/")}`;
    }
  }
  return { dir, files: count, leafDirs, levels, bytes, deepest };
}

// --- CLI ---------------------------------------------------------------------------------

if (isMain(import.meta.url)) {
  const args = process.argv.slice(2);
  const seedAt = args.indexOf("--seed");
  const seed = seedAt >= 0 ? Number(args[seedAt + 1]) : DEFAULT_SEED;
  const out = seedAt >= 0 ? args.filter((_, i) => i !== seedAt && i !== seedAt + 1)[0] : args[0];
  if (!out || !Number.isInteger(seed)) {
    console.error("usage: node --import tsx bench/corpus.ts OUTDIR [--seed N]");
    process.exit(2);
  }
  const start = process.hrtime.bigint();
  const info = generateCorpus(out, { seed });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  printTable(
    `corpus written to ${info.dir} in ${ms.toFixed(0)} ms (seed ${info.seed})`,
    ["fact", "value"],
    [
      ["files", info.files],
      ["bytes", `${info.bytes} (${fmtBytes(info.bytes)})`],
      ["directories", info.dirs],
      ["files by depth 0..5", info.filesByDepth.join(" / ")],
      ["largest", `${info.largest.path} (${fmtBytes(info.largest.bytes)})`],
      ["unique contents", `${info.uniqueBlobs} blobs, ${info.uniqueBytes} bytes`],
      ...info.rare.map((r) => [`literal ${JSON.stringify(r.literal)}`, `${r.files.length} files`]),
    ],
  );
  const { dir: _dir, ...facts } = info;
  emitJson("corpus", facts);
}
