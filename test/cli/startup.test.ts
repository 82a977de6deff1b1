// How the CLI starts: `fs` registers only the subcommand being run (help still lists them all, each
// subcommand still parses and maps errors), and the executable runs the bundle, and each library
// bundle a command requires, from its V8 code cache, falling back to compiling when the cache is
// missing or does not fit.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, ROOT } from "./run.js";

const FS_SUBCOMMANDS = [
  "ls",
  "cat",
  "lines",
  "glob",
  "grep",
  "query",
  "write",
  "create",
  "replace",
  "insert",
  "delete-lines",
  "patch",
  "rm",
  "mkdir",
  "mv",
  "history",
  "diff",
  "restore",
  "undelete",
];

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  afs.ok(["ws", "create", "s"]);
  afs.ok(["ws", "use", "s"]);
  afs.ok(["fs", "write", "/a.txt", "--content", "one\ntwo\n"]);
});
afterAll(() => afs.cleanup());

describe("the fs group, one subcommand at a time", () => {
  it("lists every subcommand in help, in order", () => {
    const help = afs.ok(["fs", "--help"]);
    const listed = [...help.matchAll(/^ {2}([a-z-]+) /gm)].map((m) => m[1]).filter((n) => n !== "help");
    expect(listed).toEqual(FS_SUBCOMMANDS);
    // `afs fs help NAME` and a bare `afs fs` still know them all too.
    expect(afs.ok(["fs", "help", "grep"])).toMatch(/^Usage: afs fs grep \[options\] <pattern> \[path\]/);
    expect(afs.run(["fs"]).stderr).toMatch(/delete-lines/);
  });

  it("gives each subcommand its own help, with the operation's argument descriptions", () => {
    for (const name of FS_SUBCOMMANDS) {
      const r = afs.run(["fs", name, "--help"]);
      expect(r.status, name).toBe(0);
      expect(r.stdout, name).toMatch(new RegExp(`^Usage: afs fs ${name} `));
    }
    expect(afs.ok(["fs", "ls", "--help"])).toMatch(/--depth <n>\s+How many levels to descend/);
  });

  it("runs each kind of subcommand and maps its errors to exit statuses", () => {
    expect(afs.ok(["fs", "ls", "/"])).toMatch(/a\.txt/);
    expect(afs.ok(["fs", "cat", "/a.txt"])).toBe("one\ntwo\n");
    expect(afs.ok(["fs", "lines", "/a.txt", "2"])).toBe("two\n");
    expect(afs.ok(["fs", "grep", "two"])).toBe("/a.txt:2:two\n");
    expect(afs.ok(["fs", "glob", "*.txt"])).toBe("/a.txt\n");
    expect(afs.ok(["fs", "mkdir", "/d"])).toBe("created directory /d\n");
    expect(afs.ok(["fs", "mv", "/d", "/e"])).toBe("moved /d to /e\n");

    const missing = afs.run(["fs", "ls", "/nope"]);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toMatch(/\[NOT_FOUND\]\n$/);
    const badNumber = afs.run(["fs", "lines", "/a.txt", "two"]);
    expect(badNumber.status).toBe(2);
    expect(badNumber.stderr).toMatch(/^afs: <start>: .*\[INVALID_ARGUMENT\]\n$/);
    const unknown = afs.run(["fs", "frobnicate"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("afs: unknown command 'frobnicate'\n");
    const catDir = afs.run(["fs", "cat", "/e"]);
    expect(catDir.status).toBe(2);
    expect(catDir.stderr).toMatch(/is a directory.*\[INVALID_ARGUMENT\]\n$/);
  });
});

describe("the executable and its code cache", () => {
  const bundleOf = (dir: string): string => {
    const name = readdirSync(dir).find((n) => /^afs-.*\.cjs$/.test(n));
    if (!name) throw new Error(`no bundle in ${dir}`);
    return name;
  };

  const cacheName = (bundle: string): string => `${bundle}.${process.version}-${process.arch}.cache`;

  it("is built with a code cache for its bundle and this Node, and one for zod's library bundle", () => {
    const dir = join(ROOT, "dist/cli");
    expect(existsSync(join(dir, cacheName(bundleOf(dir))))).toBe(true);
    const zod = readdirSync(dir).find((n) => /^lib-zod-.*\.cjs$/.test(n));
    expect(zod && existsSync(join(dir, cacheName(zod)))).toBe(true);
  });

  /**
   * A copy of the executable (main.js, its package.json, and `bundles` without the build's caches)
   * inside the repository, so the bundle still finds node_modules and package.json.
   */
  const copyExecutable = (name: string, bundles: readonly string[]): { base: string; dir: string } => {
    const base = join(ROOT, "node_modules/.cache", `${name}-${process.pid}`);
    const dir = join(base, "dist/cli");
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(ROOT, "package.json"), join(base, "package.json"));
    for (const file of ["main.js", "package.json", ...bundles])
      copyFileSync(join(ROOT, "dist/cli", file), join(dir, file));
    return { base, dir };
  };

  it("prints a file and its version without any library bundle (they load only when required)", () => {
    const { base, dir } = copyExecutable("afs-core", [bundleOf(join(ROOT, "dist/cli"))]);
    try {
      const env: NodeJS.ProcessEnv = { ...afs.env, XDG_CACHE_HOME: join(base, "xdg") };
      const run = (args: string[]) =>
        spawnSync(process.execPath, [join(dir, "main.js"), ...args], { env, encoding: "utf8" });
      expect(run(["--version"]).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
      expect(run(["fs", "cat", "/a.txt", "-w", "s"]).stdout).toBe("one\ntwo\n");
      expect(run(["status"]).status).toBe(0);
      // A command that needs one says which is missing.
      expect(run(["fs", "ls", "/", "-w", "s"]).stderr).toMatch(/lib-zod-/);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("without a fitting cache writes one into the user's cache (per Node and V8 flags); runs whatever a cache holds", () => {
    const bundle = bundleOf(join(ROOT, "dist/cli"));
    // The main bundle and the library bundles, without the build's caches.
    const bundles = readdirSync(join(ROOT, "dist/cli")).filter((n) => /^(afs|lib)-.*\.cjs$/.test(n));
    const { base, dir } = copyExecutable("afs-boot", bundles);
    try {
      const xdg = join(base, "xdg");
      const env: NodeJS.ProcessEnv = { ...afs.env, XDG_CACHE_HOME: xdg };
      delete env.NODE_OPTIONS;
      const run = (args: string[], nodeFlags: string[] = []) =>
        spawnSync(process.execPath, [...nodeFlags, join(dir, "main.js"), ...args], { env, encoding: "utf8" });
      const works = (nodeFlags: string[] = []) => {
        const version = run(["--version"], nodeFlags);
        expect(version.stderr).toBe("");
        expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
        expect(run(["fs", "cat", "/a.txt", "-w", "s"], nodeFlags).stdout).toBe("one\ntwo\n");
        // ls parses its arguments with zod, from a library bundle of its own.
        expect(run(["fs", "ls", "/", "-w", "s"], nodeFlags).stdout).toMatch(/a\.txt/);
      };
      const own = join(xdg, "afs", cacheName(bundle));
      const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);

      works();
      expect(sizeOf(own)).toBeGreaterThan(1000);
      const zod = readdirSync(join(xdg, "afs")).find((n) => /^lib-zod-.*\.cache$/.test(n));
      expect(sizeOf(join(xdg, "afs", zod ?? "none"))).toBeGreaterThan(1000);
      works();
      // A cache V8 refuses is replaced.
      writeFileSync(own, "not a V8 code cache");
      works();
      expect(sizeOf(own)).toBeGreaterThan(1000);
      // Other V8 flags: caches of their own (the main bundle's and zod's).
      works(["--max-old-space-size=300"]);
      expect(readdirSync(join(xdg, "afs")).filter((n) => n.endsWith(".cache"))).toHaveLength(4);
      // A broken cache beside the bundle is only slower.
      rmSync(xdg, { recursive: true, force: true });
      for (const cache of [Buffer.from("not a V8 code cache"), Buffer.alloc(0)]) {
        writeFileSync(join(dir, cacheName(bundle)), cache);
        works();
        rmSync(xdg, { recursive: true, force: true });
      }
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
