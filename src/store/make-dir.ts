// Creates the directory a store file (or the home) lives in, one level at a time. Node 20's
// recursive mkdir spins forever, deaf to SIGTERM, when a parent cannot be created (e.g. under
// /proc), so a bad path would hang afs instead of failing; here it is one clear error.
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { AfsError } from "../core/errors.js";

/** Ensures `dir` is a directory, creating missing levels below its nearest existing ancestor. */
export function makeDirectory(dir: string, what: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    const found = kindOf(at, what);
    if (found === "dir") break;
    if (found === "other") {
      throw new AfsError(
        "IO_ERROR",
        `cannot use ${resolve(dir)} for ${what}: ${at} exists and is not a directory; choose another path`,
        { path: resolve(dir) },
      );
    }
    if (dirname(at) === at) break;
    missing.unshift(at);
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? "";
      if (code === "EEXIST" && kindOf(level, what) === "dir") continue;
      throw new AfsError(
        code === "EACCES" || code === "EPERM" ? "PERMISSION_DENIED" : "IO_ERROR",
        `cannot create ${level} for ${what} (${code || String(e)}): ${dirname(level)} exists but does not take new directories; choose a path under a writable directory, or create ${level} yourself`,
        { path: level },
      );
    }
  }
}

function kindOf(path: string, what: string): "dir" | "other" | "missing" {
  try {
    return statSync(path).isDirectory() ? "dir" : "other";
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    // A file where a directory should be shows up as ENOTDIR below it; the walk up finds that file.
    if (code === "ENOTDIR") return "missing";
    throw new AfsError(
      code === "EACCES" || code === "EPERM" ? "PERMISSION_DENIED" : "IO_ERROR",
      `cannot use ${path} for ${what} (${code ?? String(e)}); check its permissions or choose another path`,
      { path },
    );
  }
}
