// Bundles the `afs` command line into dist/cli/main.js (plus lazily loaded chunks beside it), over
// the tsc output of the same file. One file per command path instead of a hundred-odd ES modules
// to resolve and compile is most of what a short command's start-up costs (fs cat: 0.19 s → 0.12 s).
// Native modules stay outside the bundle.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

// Chunk names carry a content hash: drop the previous build's so they do not pile up.
for (const name of readdirSync("dist/cli")) if (name.startsWith("chunk-")) rmSync(`dist/cli/${name}`);

// Bundled CommonJS dependencies call require(); ES module output needs one made for it.
const REQUIRE = "import { createRequire as __afsRequire } from 'node:module'; const require = __afsRequire(import.meta.url);";

/**
 * zod's namespace re-exports every locale (`z.locales`, ~120 modules, a third of zod's code), which
 * a bundler cannot drop since `z` is used as a value. afs only ever speaks English (zod registers
 * `en` itself), so the table is left out: every command that validates input compiles less.
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

await build({
  entryPoints: { main: "src/cli/main.ts" },
  outdir: "dist/cli",
  chunkNames: "chunk-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3", "onnxruntime-node"],
  banner: { js: REQUIRE },
  plugins: [withoutZodLocales],
  logLevel: "warning",
});

// Only chunks that call require() keep the banner: creating a require function costs each chunk a
// module object and a path lookup, and a short command loads ten or more chunks.
for (const name of readdirSync("dist/cli")) {
  if (name !== "main.js" && !name.startsWith("chunk-")) continue;
  const path = `dist/cli/${name}`;
  const text = readFileSync(path, "utf8");
  const body = text.replace(REQUIRE, "");
  if (!/\brequire\b/.test(body)) writeFileSync(path, body);
}
