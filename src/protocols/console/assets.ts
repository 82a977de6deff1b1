// The console's built assets (dist/console, made by `npm run build`): read once, kept in memory
// with their gzip and brotli forms, so a page load costs no disk read and no compression.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  br: Buffer;
  /** Hashed names (app-3F2A….js) never change content, so browsers may keep them for good. */
  immutable: boolean;
}

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".map": "application/json",
};

/**
 * dist/console beside this module's output: two levels up from tsc's dist/protocols/console, one
 * from the CLI bundle in dist/cli (the bundle's import.meta.url is its own file). Two levels up
 * from the bundle is the package root, whose console/ holds the sources, not a build: a build has
 * assets/.
 */
function assetDir(): string | null {
  for (const up of ["../../console", "../console"]) {
    const dir = fileURLToPath(new URL(`${up}/`, import.meta.url));
    if (existsSync(join(dir, "index.html")) && existsSync(join(dir, "assets"))) return dir;
  }
  return null;
}

let loaded: Map<string, Asset> | null | undefined;

/** Every asset by its URL path (`/index.html`, `/assets/app-….js`); null when the console is not built. */
export function consoleAssets(): Map<string, Asset> | null {
  if (loaded !== undefined) return loaded;
  const dir = assetDir();
  if (dir === null) {
    loaded = null;
    return null;
  }
  const assets = new Map<string, Asset>();
  const walk = (sub: string): void => {
    for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub === "" ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (!rel.endsWith(".map")) assets.set(`/${rel}`, asset(join(dir, rel)));
    }
  };
  walk("");
  loaded = assets;
  return assets;
}

function asset(file: string): Asset {
  const body = readFileSync(file);
  const type = TYPES[extname(file)] ?? "application/octet-stream";
  return {
    type,
    body,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    immutable: /-[A-Z0-9]{8}\.\w+$/.test(file),
  };
}
