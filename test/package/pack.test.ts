// The package as a consumer gets it: `npm pack` the built package, install the tarball into an empty
// project, type-check a program importing every entry point under strict, run it, and run the
// installed `afs` bin. Fails when an entry point is missing, untyped, or leaks a type a consumer
// cannot resolve, and when an internal module becomes importable.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, ROOT } from "../cli/run.js";

/** Every subpath hosts and tools may import; the consumer imports each of them. */
const ENTRY_POINTS = [".", "./mcp", "./acp", "./broker", "./broker-client"];
const CONSUMER = join(ROOT, "test/package/consumer");
const SQLITE_ADDON = "build/Release/better_sqlite3.node";

/**
 * The nested npm must not inherit `npm test`'s own npm_* settings (prefix, package, lifecycle), nor
 * the installed afs a store or workspace from outside.
 */
const npmEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|AFS_)/i.test(key)));

const version = (dir: string): string =>
  (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;

/** The TypeScript blocks of docs/library.md that are whole programs: they start with an import. */
const docExamples = (): string[] =>
  [...readFileSync(join(ROOT, "docs/library.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .filter((block) => block.startsWith("import "));

let tmp: string;
let app: string;
let installed: string;

beforeAll(async () => {
  ensureBuilt();
  tmp = await mkdtemp(join(tmpdir(), "afs-pack-"));
  app = join(tmp, "app");
  mkdirSync(app);
  // dist/ is already built; the prepare script would only build it again.
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], {
      cwd: ROOT,
      env: npmEnv(),
      encoding: "utf8",
    }),
  ) as { filename: string }[];
  const tarball = join(tmp, packed[0]?.filename ?? "");
  writeFileSync(
    join(app, "package.json"),
    `${JSON.stringify({ name: "afs-consumer", private: true, type: "module" })}\n`,
  );
  // From the warm npm cache; no install scripts (better-sqlite3's addon is provided below) and no
  // optional onnxruntime-node (local embeddings, ~300 MB, not used by the consumer).
  execFileSync(
    "npm",
    ["install", tarball, "--ignore-scripts", "--omit=optional", "--prefer-offline", "--no-audit", "--no-fund"],
    { cwd: app, env: npmEnv(), stdio: "pipe" },
  );
  installed = join(app, "node_modules/afs");
  // better-sqlite3's install script compiles its addon (~60 s); this project's build is the same
  // code when the versions match, so it is copied. Otherwise it is compiled as a consumer's would be.
  const sqlite = join(app, "node_modules/better-sqlite3");
  const ours = join(ROOT, "node_modules/better-sqlite3");
  if (version(sqlite) === version(ours) && existsSync(join(ours, SQLITE_ADDON))) {
    mkdirSync(join(sqlite, "build/Release"), { recursive: true });
    copyFileSync(join(ours, SQLITE_ADDON), join(sqlite, SQLITE_ADDON));
  } else {
    execFileSync("npm", ["rebuild", "better-sqlite3"], { cwd: app, env: npmEnv(), stdio: "pipe" });
  }
  for (const file of ["main.ts", "internals.ts"]) copyFileSync(join(CONSUMER, file), join(app, file));
  // docs/library.md's complete examples (those that open with their imports) are compiled with the
  // consumer, so the documentation cannot drift from the package it documents.
  for (const [i, example] of docExamples().entries()) writeFileSync(join(app, `doc-example-${i + 1}.ts`), example);
  const tsconfig = JSON.parse(readFileSync(join(CONSUMER, "tsconfig.json"), "utf8")) as { files: string[] };
  tsconfig.files.push(...docExamples().map((_, i) => `doc-example-${i + 1}.ts`));
  writeFileSync(join(app, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  // The consumer's own dev dependency, as any TypeScript project on Node has it.
  mkdirSync(join(app, "node_modules/@types"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules/@types/node"), join(app, "node_modules/@types/node"), "dir");
}, 600_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("the installed package", () => {
  it("declares every entry point with types and ESM output that were packed", () => {
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      exports: Record<string, { types: string; default: string }>;
      types: string;
      bin: Record<string, string>;
    };
    for (const entry of ENTRY_POINTS) {
      const target = pkg.exports[entry];
      expect(target, `exports["${entry}"]`).toBeDefined();
      expect(existsSync(join(installed, target?.types ?? "-")), `${entry} types`).toBe(true);
      expect(existsSync(join(installed, target?.default ?? "-")), `${entry} code`).toBe(true);
    }
    expect(existsSync(join(installed, pkg.types))).toBe(true);
    expect(pkg.bin.afs).toBe("dist/cli/main.js");
  });

  it("type-checks a consumer of every entry point under strict, with the library's types only", () => {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const r = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app, encoding: "utf8" });
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("runs the consumer: an engine in a temporary home, a workspace, a file written and read", () => {
    const r = spawnSync(process.execPath, ["out/main.js"], { cwd: app, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { version: string; content: string; diff: { modified: number } };
    expect(out).toMatchObject({ version: version(ROOT), content: "hello, world\n", diff: { modified: 1 } });
  });

  it("runs docs/library.md's engine example as written", () => {
    expect(docExamples().length).toBeGreaterThanOrEqual(5);
    const first = docExamples()[0] ?? "";
    expect(first).toContain("Afs.open");
    const r = spawnSync(process.execPath, ["out/doc-example-1.js"], { cwd: app, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("hello, world");
    expect(r.stdout).toContain("NOT_FOUND");
  });

  it("keeps internal modules out of reach", () => {
    const r = spawnSync(
      process.execPath,
      ["-e", 'import("afs/dist/workspace/afs.js").then(() => console.log("imported"), (e) => console.log(e.code))'],
      { cwd: app, encoding: "utf8" },
    );
    expect(r.stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("runs the installed afs bin", async () => {
    const home = await mkdtemp(join(tmpdir(), "afs-pack-home-"));
    try {
      const afs = (...args: string[]) =>
        spawnSync(join(app, "node_modules/.bin/afs"), args, {
          cwd: app,
          encoding: "utf8",
          env: { ...npmEnv(), AFS_HOME: home, AFS_DAEMON: "off", XDG_CACHE_HOME: home },
        });
      const v = afs("--version");
      expect(v.stdout.trim()).toBe(version(ROOT));
      expect(afs("ws", "create", "demo").status).toBe(0);
      expect(afs("fs", "write", "/a.txt", "--content", "from the bin\n", "-w", "demo").status).toBe(0);
      const cat = afs("fs", "cat", "/a.txt", "-w", "demo");
      expect(cat.stderr).toBe("");
      expect(cat.stdout).toBe("from the bin\n");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
