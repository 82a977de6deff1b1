#!/usr/bin/env node
// The `afs` executable (built to dist/cli/main.js): runs the bundled command line from the V8 code
// cache written beside it at build time, so a short command neither parses nor compiles the bundle
// (Node 20 has no compile cache of its own). Built by scripts/bundle-cli.mjs.
import { readFileSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";

/** The bundle's file name (content-hashed, so a cache can never belong to another build); set by the build. */
declare const AFS_BUNDLE: string;

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

const dir = dirname(fileURLToPath(import.meta.url));
const file = join(dir, AFS_BUNDLE);
const cacheFile = `${file}.cache`;

function cached(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined; // no cache: V8 compiles from source, as node would
  }
}

// The bundle is ASCII (esbuild's charset option), so latin1 reads it without decoding UTF-8. V8
// checks the cache against this source and its own version and flags, and compiles from source
// when it does not fit (another Node, other V8 flags).
const script = new Script(Module.wrap(readFileSync(file, "latin1")), {
  filename: file,
  cachedData: cached(),
});
// The build runs one short command with this set; the cache then holds what such a command compiles.
if (process.env.AFS_WRITE_CODE_CACHE === "1") {
  process.once("exit", () => writeFileSync(cacheFile, script.createCachedData()));
}
const module = { exports: {} };
(script.runInThisContext() as ModuleFunction)(module.exports, createRequire(file), module, file, dir);
