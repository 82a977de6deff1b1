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

/** FNV-1a, enough to tell flag sets apart in a file name. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}

const dir = dirname(fileURLToPath(import.meta.url));
const file = join(dir, AFS_BUNDLE);
// A cache fits one V8 and one set of V8 flags (--max-old-space-size in NODE_OPTIONS is enough to
// refuse it), so its name carries both.
const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ").trim();
const cacheName = `${AFS_BUNDLE}.${process.version}-${process.arch}${flags ? `.${fnv1a(flags)}` : ""}.cache`;
// The build writes one beside the bundle; a Node or flags it did not know get one in the user's cache.
const shipped = join(dir, cacheName);
const local = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "afs", cacheName);

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function write(path: string, data: Buffer): void {
  try {
    // Whole or not at all: another afs may be reading it.
    const temp = `${path}.${process.pid}`;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(temp, data);
    renameSync(temp, path);
  } catch {
    // Only speed is lost: the next start compiles again.
  }
}

const training = process.env.AFS_WRITE_CODE_CACHE === "1";
const cachedData = training ? undefined : (read(local) ?? read(shipped));
// The bundle is ASCII (esbuild's charset option), so latin1 reads it without decoding UTF-8. V8
// checks a cache against this source, its version and its flags, and compiles from source when it
// does not fit.
const script = new Script(Module.wrap(readFileSync(file, "latin1")), { filename: file, cachedData });
if (training) {
  // The build's cache holds every function the command it runs compiled (see scripts/bundle-cli.mjs).
  process.once("exit", () => write(shipped, script.createCachedData()));
} else if (!cachedData || script.cachedDataRejected) {
  // Written before running: a command may change V8 flags (grep does), and a cache made after
  // that would never fit again.
  write(local, script.createCachedData());
}
const module = { exports: {} };
(script.runInThisContext() as ModuleFunction)(module.exports, createRequire(file), module, file, dir);
