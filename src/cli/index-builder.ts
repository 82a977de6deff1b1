// Starting grep's content index builder in the background: a detached `afs index builder` process,
// after an import or a mount of many files, or when a search finds many contents not indexed yet.
// The process claims its place in the index file, so a second one started meanwhile just leaves.
import type { Env } from "../core/settings.js";
import type { Afs } from "../workspace/afs.js";

/** AFS_INDEX_BACKGROUND=off: no builder is started on its own (`afs index build` still builds). */
const enabled = (env: Env): boolean => env.AFS_INDEX_BACKGROUND !== "off";

/** Starts a builder unless one is at work; returns its pid, or null when none was started. */
export async function startIndexBuilder(afs: Afs, env: Env): Promise<number | null> {
  if (afs.indexes.text.building()) return null;
  // Loaded here: every command loads this module, and few start a process (~2 ms).
  const { spawn } = await import("node:child_process");
  const child = spawn(
    process.execPath,
    [...process.execArgv, process.argv[1] as string, "index", "builder", "--background"],
    {
      // The store through the environment, not argv: a Redis URL may carry a password.
      env: { ...env, AFS_HOME: afs.home, AFS_STORE: afs.storeUrl, AFS_WRITE_CODE_CACHE: undefined },
      detached: true,
      stdio: "ignore",
      // Not the caller's directory: a background process should not keep a directory busy.
      cwd: "/",
    },
  );
  child.on("error", () => {});
  child.unref();
  return child.pid ?? null;
}

/** Has searches through `afs` start a builder when they leave contents to one (see SearchFiles.onBacklog). */
export function startBuilderWhenBehind(afs: Afs, env: Env): void {
  if (!enabled(env)) return;
  let started = 0;
  afs.indexes.whenBehind(() => {
    // A builder takes a moment to claim its place: searches meanwhile do not start more.
    if (Date.now() - started < 10_000) return;
    started = Date.now();
    startIndexBuilder(afs, env).catch(() => {});
  });
}

/** After an import or a mount of `files` files: more than a search indexes itself starts a builder. */
export async function startBuilderAfter(afs: Afs, env: Env, files: number): Promise<void> {
  if (enabled(env) && files > afs.indexes.text.syncLimitOf()) await startIndexBuilder(afs, env);
}
