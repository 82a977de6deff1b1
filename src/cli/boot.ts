#!/usr/bin/env node
// The `afs` executable (built to dist/cli/main.js): runs the bundled command line from a V8 code
// cache, so a short command neither parses nor compiles the bundle (Node 20 has no compile cache
// of its own). Built by scripts/bundle-cli.mjs.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { homedir } from "node:os";
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
// A cache fits one V8: the build writes one for the Node that built it, beside the bundle; any
// other Node writes its own into the user's cache directory on first use.
const cacheName = `${AFS_BUNDLE}.${process.version}-${process.arch}.cache`;
const shipped = join(dir, cacheName);
const local = (): string => join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "afs", cacheName);

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** The cache to use, and where to write one when there is none (after running: the functions this command compiled). */
function choose(): { cachedData?: Buffer; writeTo?: string } {
  if (process.env.AFS_WRITE_CODE_CACHE === "1") return { writeTo: shipped };
  const built = read(shipped);
  if (built) return { cachedData: built };
  const path = local();
  const own = read(path);
  return own ? { cachedData: own } : { writeTo: path };
}

const { cachedData, writeTo } = choose();
// The bundle is ASCII (esbuild's charset option), so latin1 reads it without decoding UTF-8. V8
// checks a cache against this source, its version and its flags, and compiles from source when it
// does not fit.
const script = new Script(Module.wrap(readFileSync(file, "latin1")), { filename: file, cachedData });
if (writeTo) {
  process.once("exit", () => {
    try {
      // Whole or not at all: another afs may be reading it.
      const temp = `${writeTo}.${process.pid}`;
      mkdirSync(dirname(writeTo), { recursive: true });
      writeFileSync(temp, script.createCachedData());
      renameSync(temp, writeTo);
    } catch {
      // Only speed is lost: the next start compiles again.
    }
  });
}
const module = { exports: {} };
(script.runInThisContext() as ModuleFunction)(module.exports, createRequire(file), module, file, dir);
