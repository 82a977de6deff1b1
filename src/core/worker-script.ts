// Starting a worker thread on one of afs's own modules, wherever afs runs from: tsc's output
// (dist/DIR/NAME.js beside the caller), the CLI's bundle (dist/cli/afs-*.cjs, whose module URL is
// the bundle's: "../DIR/NAME.js"), or the TypeScript sources under tsx (tests, benches). Node 20
// applies no --import hooks to a worker's own entry (given `--import tsx` it still refuses ".ts"),
// so there a line of script registers tsx's API in the worker first, then imports the source.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/** What a worker runs: a script's URL, or code that loads the source. */
export type WorkerScript = { url: URL } | { code: string };

/**
 * The script of module `name` in src/`dir` for a caller whose module URL is `from`, or null when
 * it is not installed (a damaged install; callers fall back to their own thread or say so).
 */
export function workerScript(dir: string, name: string, from: string): WorkerScript | null {
  for (const relative of [`./${name}.js`, `../${dir}/${name}.js`]) {
    const url = new URL(relative, from);
    if (existsSync(url)) return { url };
  }
  const source = new URL(`./${name}.ts`, from);
  if (!existsSync(source)) return null;
  let tsx: string;
  try {
    // tsx's ES entry of its API, as its package exports name it (require.resolve would give the
    // CommonJS one, which fails in a worker).
    const pkg = createRequire(from).resolve("tsx/package.json");
    const entry = JSON.parse(readFileSync(pkg, "utf8")).exports["./esm/api"].import.default as string;
    tsx = new URL(entry, pathToFileURL(pkg)).href;
  } catch {
    return null;
  }
  return {
    code: `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(source.href)}); })`,
  };
}

/** A worker thread running `script`. */
export function startWorker(script: WorkerScript, options: WorkerOptions = {}): Worker {
  return "url" in script ? new Worker(script.url, options) : new Worker(script.code, { ...options, eval: true });
}
