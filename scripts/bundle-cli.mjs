// Bundles the `afs` command line for fast start-up, in place of tsc's output of src/cli: the CLI as
// one CommonJS file (dist/cli/afs-<hash>.cjs; modules a command does not import stay unevaluated)
// plus one per library package it uses beyond the shortest commands' (lib-<package>-<hash>.cjs), V8's
// code caches for them from short commands, and dist/cli/main.js, the small loader that runs each
// bundle from its cache (src/cli/boot.ts). Native addons stay outside.
// Measured with bench/cli-startup.ts; a hundred-odd ES modules cost fs cat 0.19 s, ES chunks 0.12 s.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { build } from "esbuild";

const OUT = "dist/cli";

// Earlier builds' bundles, caches and chunks: names carry a content hash, so they would pile up.
for (const name of readdirSync(OUT))
  if (/^(chunk-.*\.js|(afs|lib)-.*\.cjs(\..*)?)$/.test(name)) rmSync(join(OUT, name));

/**
 * zod's namespace re-exports every locale (`z.locales`, ~120 modules, a third of zod's code), which
 * a bundler cannot drop since `z` is used as a value. afs only ever speaks English (zod registers
 * `en` itself), so the table is left out.
 */
const withoutZodLocales = {
  name: "without-zod-locales",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: "zod-locales", namespace: "afs-empty" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "afs-empty" }, () => ({ contents: "export {};", loader: "js" }));
  },
};

/** Options every bundle shares. */
const common = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // ASCII only, so the loader reads it as latin1 (no UTF-8 decode of a few MB on every start).
  charset: "ascii",
  // The sources are ES modules (strict); import.meta.url is the bundle's own URL, as it was for a chunk.
  banner: { js: `"use strict";\nconst __afsUrl = require("node:url").pathToFileURL(__filename).href;` },
  define: { "import.meta.url": "__afsUrl" },
  // import() of a package (the embedding runtime) becomes require(): Node 20 loses a script's
  // dynamic-import callback when the script comes from a code cache (and calls it experimental).
  supported: { "dynamic-import": false },
  metafile: true,
  logLevel: "warning",
};

/**
 * The packages in the main bundle: what `afs fs cat` runs (better-sqlite3's JavaScript; only its
 * addon, a .node file, loads from node_modules). Every other package the sources import is a
 * library bundle of its own (dist/cli/lib-<package>-<hash>.cjs) that the loader runs, from its own
 * code cache, when a command first requires it: fs cat reads and deserializes ~0.9 MB, not ~4 MB
 * (redis' client alone is 1.5 MB, zod 0.8 MB).
 */
const MAIN_PACKAGES = new Set(["commander", "better-sqlite3", "bindings", "file-uri-to-path"]);
/** Native, so never bundled: Node loads them from node_modules. */
const NATIVE = new Set(["onnxruntime-node"]);

/** The package a specifier names (`@scope/name/sub.js` -> `@scope/name`); boot.ts splits the same way. */
const packageOf = (id) => id.split("/", id.startsWith("@") ? 2 : 1).join("/");
const isPackage = (id) => !/^[./]/.test(id) && !isBuiltin(id);

/**
 * Leaves out, for the loader to route, every package `separate` says belongs to another bundle,
 * and adds each specifier left out to `routed`.
 */
const libraries = (separate, routed) => ({
  name: "libraries",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async ({ path, kind, importer, resolveDir, pluginData }) => {
      if (pluginData === "libraries" || !isPackage(path)) return undefined;
      if (NATIVE.has(packageOf(path))) return { path, external: true };
      if (!separate(packageOf(path))) return undefined;
      // An optional package that is not installed (required inside a try) stays as esbuild leaves it.
      const found = await b.resolve(path, { kind, importer, resolveDir, pluginData: "libraries" });
      if (found.errors.length > 0) return undefined;
      routed.add(path);
      return { path, external: true };
    });
  },
});

const mainRouted = new Set();
const main = await build({
  ...common,
  entryPoints: { afs: "src/cli/main.ts" },
  outdir: OUT,
  entryNames: "[name]-[hash]",
  outExtension: { ".js": ".cjs" },
  plugins: [withoutZodLocales, libraries((pkg) => !MAIN_PACKAGES.has(pkg), mainRouted)],
});
const bundle = basename(Object.keys(main.metafile.outputs).find((path) => path.endsWith(".cjs")));

/**
 * One library bundle per package the sources import, each exporting a loader per specifier asked
 * of it (`{"zod/v4": () => require("zod/v4")}`); the others it imports stay outside too, so each
 * package is loaded once. A bundle that asks another for a new specifier rebuilds that one.
 */
const wanted = new Map();
const want = (ids) => {
  for (const id of ids) {
    const pkg = packageOf(id);
    if (!wanted.has(pkg)) wanted.set(pkg, new Set());
    wanted.get(pkg).add(id);
  }
};
want(mainRouted);
const built = new Map();
for (let stale = [...wanted.keys()]; stale.length > 0; ) {
  const asked = new Set();
  for (const pkg of stale) {
    const ids = [...wanted.get(pkg)].sort();
    const r = await build({
      ...common,
      stdin: {
        contents: `module.exports = {${ids.map((id) => `\n  ${JSON.stringify(id)}: () => require(${JSON.stringify(id)}),`).join("")}\n};\n`,
        resolveDir: process.cwd(),
        sourcefile: `lib-${pkg}.js`,
        loader: "js",
      },
      write: false,
      outfile: join(OUT, "lib.cjs"),
      // The loaders are require() calls, which would pick a package's CommonJS build; with "import"
      // too, a package listing its ES build first (zod does) gives that, as the sources' imports did.
      conditions: ["import"],
      plugins: [withoutZodLocales, libraries((other) => other !== pkg && wanted.has(other), asked)],
    });
    built.set(pkg, r.outputFiles[0].contents);
  }
  const before = new Map([...wanted].map(([pkg, ids]) => [pkg, ids.size]));
  want(asked);
  stale = [...wanted.keys()].filter((pkg) => before.get(pkg) !== wanted.get(pkg).size);
}
/** Package name to its library bundle's file name (content-hashed, as the main bundle's), for the loader. */
const libraryFiles = {};
for (const [pkg, contents] of built) {
  const hash = createHash("sha256").update(contents).digest("hex").slice(0, 8).toUpperCase();
  libraryFiles[pkg] = `lib-${pkg.replace(/^@/, "").replace(/\//g, "+")}-${hash}.cjs`;
  writeFileSync(join(OUT, libraryFiles[pkg]), contents);
}

// The executable is a CommonJS script: an ES module entry costs every command Node's ES loader
// (~5 ms). dist/cli/package.json says so; nothing else there is loaded, so tsc's ES output of
// src/cli (replaced by the bundle) goes.
for (const name of readdirSync(OUT)) {
  if (name !== "main.js" && !/^(afs|lib)-/.test(name)) rmSync(join(OUT, name), { recursive: true, force: true });
}
writeFileSync(join(OUT, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
await build({
  entryPoints: ["src/cli/boot.ts"],
  outfile: join(OUT, "main.js"),
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  banner: { js: `"use strict";\nconst __bootUrl = require("node:url").pathToFileURL(__filename).href;` },
  define: {
    AFS_BUNDLE: JSON.stringify(bundle),
    AFS_LIBRARIES: JSON.stringify(libraryFiles),
    "import.meta.url": "__bootUrl",
  },
  logLevel: "warning",
});

// The code caches for this Node, each written when a training run ends with what it compiled: the
// main bundle's from `afs fs cat`, the shortest path through the engine and the store; zod's from
// `afs fs ls`, an operation parsing its arguments. A command that needs more compiles the rest
// lazily, as without a cache; a library no run loads gets a cache in the user's cache on first use.
const home = mkdtempSync(join(tmpdir(), "afs-code-cache-"));
try {
  // XDG_CACHE_HOME: the runs before the cache exists would write one into the user's cache.
  // AFS_DAEMON=off: each run compiles its own bundles; a resident afs would answer `fs ls` instead.
  const base = { ...process.env, AFS_HOME: home, XDG_CACHE_HOME: home, AFS_DAEMON: "off" };
  for (const key of ["AFS_STORE", "AFS_WORKSPACE", "AFS_WRITE_CODE_CACHE"]) delete base[key];
  const afs = (args, env = {}) => {
    const r = spawnSync(process.execPath, [join(OUT, "main.js"), ...args], {
      env: { ...base, ...env },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed while writing the code cache: ${r.stderr}`);
  };
  afs(["ws", "create", "cache"]);
  afs(["fs", "write", "/f", "--content", "x", "-w", "cache"]);
  afs(["fs", "ls", "/", "-w", "cache"], { AFS_WRITE_CODE_CACHE: "1" });
  afs(["fs", "cat", "/f", "-w", "cache"], { AFS_WRITE_CODE_CACHE: "1" });
} finally {
  rmSync(home, { recursive: true, force: true });
}
