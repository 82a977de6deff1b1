// Bundles the `afs` command line for fast start-up, in place of tsc's output of src/cli: the whole
// CLI as one CommonJS file (dist/cli/afs-<hash>.cjs; modules a command does not import stay
// unevaluated), V8's code cache for it from one short command, and dist/cli/main.js, the small
// loader that runs the bundle from that cache (src/cli/boot.ts). Native addons stay outside.
// Measured with bench/cli-startup.ts; a hundred-odd ES modules cost fs cat 0.19 s, ES chunks 0.12 s.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { build } from "esbuild";

const OUT = "dist/cli";

// Earlier builds' bundles, caches and chunks: names carry a content hash, so they would pile up.
for (const name of readdirSync(OUT)) if (/^(chunk-.*\.js|afs-.*\.cjs(\..*)?)$/.test(name)) rmSync(join(OUT, name));

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

const bundled = await build({
  entryPoints: { afs: "src/cli/main.ts" },
  outdir: OUT,
  entryNames: "[name]-[hash]",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  // ASCII only, so the loader reads it as latin1 (no UTF-8 decode of a few MB on every start).
  charset: "ascii",
  // better-sqlite3 is bundled too (its JavaScript); only its addon, a .node file, loads from node_modules.
  external: ["onnxruntime-node"],
  // The sources are ES modules (strict); import.meta.url is the bundle's own URL, as it was for a chunk.
  banner: { js: `"use strict";\nconst __afsUrl = require("node:url").pathToFileURL(__filename).href;` },
  define: { "import.meta.url": "__afsUrl" },
  // import() of a package (the embedding runtime) becomes require(): Node 20 loses a script's
  // dynamic-import callback when the script comes from a code cache (and calls it experimental).
  supported: { "dynamic-import": false },
  plugins: [withoutZodLocales],
  metafile: true,
  logLevel: "warning",
});
const bundle = basename(Object.keys(bundled.metafile.outputs).find((path) => path.endsWith(".cjs")));

// The executable is a CommonJS script: an ES module entry costs every command Node's ES loader
// (~5 ms). dist/cli/package.json says so; nothing else there is loaded, so tsc's ES output of
// src/cli (replaced by the bundle) goes.
for (const name of readdirSync(OUT)) {
  if (name !== "main.js" && !name.startsWith("afs-")) rmSync(join(OUT, name), { recursive: true, force: true });
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
  define: { AFS_BUNDLE: JSON.stringify(bundle), "import.meta.url": "__bootUrl" },
  logLevel: "warning",
});

// The code cache for this Node: what `afs fs cat` compiles, the shortest path through the engine and the store
// (a command that needs more compiles the rest lazily, as without a cache).
const home = mkdtempSync(join(tmpdir(), "afs-code-cache-"));
try {
  // XDG_CACHE_HOME: the runs before the cache exists would write one into the user's cache.
  const base = { ...process.env, AFS_HOME: home, XDG_CACHE_HOME: home };
  for (const key of ["AFS_STORE", "AFS_WORKSPACE", "AFS_WRITE_CODE_CACHE"]) delete base[key];
  const afs = (args, env = {}) => {
    const r = spawnSync(process.execPath, [join(OUT, "main.js"), ...args], { env: { ...base, ...env }, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`afs ${args.join(" ")} failed while writing the code cache: ${r.stderr}`);
  };
  afs(["ws", "create", "cache"]);
  afs(["fs", "write", "/f", "--content", "x", "-w", "cache"]);
  afs(["fs", "cat", "/f", "-w", "cache"], { AFS_WRITE_CODE_CACHE: "1" });
} finally {
  rmSync(home, { recursive: true, force: true });
}
