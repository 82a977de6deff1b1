// The directories an ACP session may touch (its cwd and additionalDirectories), each served by a
// Volume, and the one place an agent's absolute host path becomes (volume, volume path). The lexical
// check here is the first gate; the volume then checks where the path really lands (symlinks).
import { realpath } from "node:fs/promises";
import { AfsError } from "../../core/errors.js";
import { normalizePath, ROOT } from "../../core/paths.js";
import type { Volume } from "../../volume/volume.js";

export interface Root {
  /** The directory as the session named it (absolute, normalized). */
  dir: string;
  /** The same directory with symlinks resolved, so either spelling is accepted. */
  real: string;
  volume: Volume;
}

export interface Located {
  root: Root;
  /** Absolute inside the volume: "/src/a.ts". */
  path: string;
  /** The host path, normalized: what messages, buffers and the change log name. */
  host: string;
}

/** Opens the volume that serves one directory (a plain directory, or a mounted one whose writes are uploaded at once). */
export type VolumeOpener = (dir: string) => Promise<Volume>;

export async function openRoots(dirs: readonly string[], open: VolumeOpener): Promise<Root[]> {
  return Promise.all(
    dirs.map(async (given) => {
      const dir = absolute(given, "directory");
      const real = await realpath(dir).catch(() => {
        throw new AfsError("NOT_FOUND", `session directory ${dir} does not exist`, { path: dir });
      });
      return { dir, real, volume: await open(dir) };
    }),
  );
}

/** The root an absolute host path lies in, or an error naming the path and what is allowed. */
export function locate(roots: readonly Root[], given: unknown): Located {
  const host = absolute(given, "path");
  for (const root of roots) {
    for (const base of [root.dir, root.real]) {
      if (host === base) return { root, path: ROOT, host };
      if (host.startsWith(base === ROOT ? ROOT : `${base}/`)) {
        return { root, path: normalizePath(host.slice(base.length)), host };
      }
    }
  }
  throw new AfsError(
    "PERMISSION_DENIED",
    `${host} is outside this session's directories (${roots.map((r) => r.dir).join(", ")}); only paths inside them can be used`,
    { path: host },
  );
}

/** An absolute host path with "." and ".." resolved; a relative path, NUL or backslash is refused. */
function absolute(given: unknown, what: string): string {
  if (typeof given !== "string" || !given.startsWith("/")) {
    throw new AfsError(
      "INVALID_PATH",
      `${what} ${JSON.stringify(given)} is not absolute; ACP paths must be absolute, e.g. /home/me/project/src/main.py`,
      { path: String(given) },
    );
  }
  try {
    return normalizePath(given);
  } catch (e) {
    if (e instanceof AfsError)
      throw new AfsError(e.code, `${what} ${JSON.stringify(given)}: ${e.message}`, { path: given });
    throw e;
  }
}
