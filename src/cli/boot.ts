#!/usr/bin/env node
// The `afs` executable (built to dist/cli/main.js): runs the bundled command line, and each library
// bundle when the command first requires it, from a V8 code cache, so a short command neither
// parses nor compiles them (Node 20 has no compile cache of its own). Built by scripts/bundle-cli.mjs.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { runResident, startResident } from "./resident/client.js";
import { forResident, residentDisabled, setBuild, socketPath } from "./resident/socket.js";

/** The bundles' file names (content-hashed, so a cache can never belong to another build); set by the build. */
declare const AFS_BUNDLE: string;
/** Package name to the file name of the library bundle that holds it. */
declare const AFS_LIBRARIES: Readonly<Record<string, string>>;

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

/** What a library bundle exports: a loader per module specifier the other bundles import from it. */
type Library = Readonly<Record<string, () => unknown>>;

/** FNV-1a, enough to tell flag sets apart in a file name. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}

const dir = dirname(fileURLToPath(import.meta.url));
// A cache fits one V8 and one set of V8 flags (--max-old-space-size in NODE_OPTIONS is enough to
// refuse it), so its name carries both.
const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ").trim();
const cacheSuffix = `.${process.version}-${process.arch}${flags ? `.${fnv1a(flags)}` : ""}.cache`;
// The build writes one beside each bundle; a Node or flags it did not know get one in the user's cache.
const localDir = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "afs");
const training = process.env.AFS_WRITE_CODE_CACHE === "1";

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

/** Runs one bundle from its code cache (or compiles it, and writes a cache) and returns its exports. */
function run(name: string): unknown {
  const file = join(dir, name);
  const shipped = join(dir, name + cacheSuffix);
  const local = join(localDir, name + cacheSuffix);
  const cachedData = training ? undefined : (read(local) ?? read(shipped));
  // Bundles are ASCII (esbuild's charset option), so latin1 reads them without decoding UTF-8. V8
  // checks a cache against this source, its version and its flags, and compiles from source when
  // it does not fit.
  const script = new Script(Module.wrap(readFileSync(file, "latin1")), { filename: file, cachedData });
  if (training) {
    // The build's caches hold every function the commands it runs compiled (see scripts/bundle-cli.mjs).
    process.once("exit", () => write(shipped, script.createCachedData()));
  } else if (!cachedData || script.cachedDataRejected) {
    // Written before running: a command may change V8 flags (grep does), and a cache made after
    // that would never fit again.
    write(local, script.createCachedData());
  }
  const module = { exports: {} };
  (script.runInThisContext() as ModuleFunction)(module.exports, bundleRequire, module, file, dir);
  return module.exports;
}

const nodeRequire = createRequire(join(dir, AFS_BUNDLE));
const libraries = new Map<string, Library>();
const modules = new Map<string, unknown>();

/** The bundles' `require`: a package in a library bundle comes from there (once), anything else from Node. */
const bundleRequire: NodeJS.Require = Object.assign((id: string): unknown => {
  const name = AFS_LIBRARIES[id.split("/", id.startsWith("@") ? 2 : 1).join("/")];
  if (name === undefined) return nodeRequire(id);
  if (modules.has(id)) return modules.get(id);
  let library = libraries.get(name);
  if (!library) {
    library = run(name) as Library;
    libraries.set(name, library);
  }
  const load = library[id];
  if (!load) throw new Error(`${id} is not in the library bundle ${name}; rebuild afs (npm run build)`);
  const loaded = load();
  modules.set(id, loaded);
  return loaded;
}, nodeRequire);

// A search goes to the resident afs when one runs (it answers from warm stores and indexes); when
// none does, this process does the work and then starts one, for the next command.
setBuild(AFS_BUNDLE);
const argv = process.argv.slice(2);
// A training run (the build writing code caches) must run the bundles itself.
const socket = !training && forResident(argv) && !residentDisabled(process.env) ? socketPath(process.env) : undefined;
if (socket === undefined) run(AFS_BUNDLE);
else {
  void runResident(socket, argv).then((status) => {
    if (status !== undefined) {
      process.exitCode = status;
      return;
    }
    process.once("beforeExit", () => void startResident());
    run(AFS_BUNDLE);
  });
}
