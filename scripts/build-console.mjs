// Builds the web console (console/) into dist/console: one minified ES module and one stylesheet,
// named by content hash so browsers may cache them for good, and index.html naming them. No CDN:
// everything the page loads is served by afs itself, so the console works offline.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { build } from "esbuild";

const OUT = "dist/console";
rmSync(OUT, { recursive: true, force: true });
mkdirSync(`${OUT}/assets`, { recursive: true });

const result = await build({
  entryPoints: { app: "console/src/main.tsx" },
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome120", "firefox120", "safari17"],
  minify: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: `${OUT}/assets`,
  entryNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  legalComments: "eof",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((p) => /^app-.*\.js$/.test(p));
const css = outputs.find((p) => /^app-.*\.css$/.test(p));
if (!js || !css) throw new Error(`console build: missing app js or css in ${outputs.join(", ")}`);
const html = readFileSync("console/index.html", "utf8").replace("%JS%", js).replace("%CSS%", css);
writeFileSync(`${OUT}/index.html`, html);
