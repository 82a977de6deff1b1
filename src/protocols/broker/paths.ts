// Every path a server sends, turned into (root, volume path) or refused: NUL, backslashes and ".."
// (also percent-encoded) are INVALID_PATH; absolute host paths and file:// URIs must lie inside a
// root (PERMISSION_DENIED otherwise, without echoing the host path); then `landing` checks where it
// really lands, symlinks followed, so consent and confinement judge the real place.
import { AfsError } from "../../core/errors.js";
import { joinPath, normalizePath, parentOf, ROOT, segments } from "../../core/paths.js";
import type { BrokerRoot } from "./roots.js";

export interface Target {
  root: BrokerRoot;
  /** Absolute inside the root's volume: "/src/a.ts". */
  path: string;
}

const MAX_PATH_CHARS = 4096;
const MAX_HOPS = 40;

const invalid = (why: string): AfsError => new AfsError("INVALID_PATH", why);

function checkText(s: string, what: string): void {
  if (s.includes("\0")) throw invalid(`${what} contains a NUL byte`);
  if (s.includes("\\")) throw invalid(`${what} contains a backslash; use "/" as the separator`);
  if (s.split("/").includes("..")) throw invalid(`${what} contains a ".." segment; name the place directly`);
}

/** The host path a file:// URI names; anything else (another host, a malformed escape) is INVALID_PATH. */
function fromUri(uri: string): string {
  const m = /^file:\/\/(localhost)?(\/[^?#]*)$/i.exec(uri);
  if (!m) throw invalid("a URI path must be file:///absolute/path (no host, query or fragment)");
  try {
    return decodeURIComponent(m[2] as string);
  } catch {
    throw invalid("the URI has a malformed percent escape");
  }
}

/** Where a server's path lies, lexically; `landing` then follows symlinks. */
export function resolvePath(roots: readonly BrokerRoot[], given: unknown): Target {
  if (typeof given !== "string" || given.length === 0) throw invalid("path must be a non-empty string");
  if (given.length > MAX_PATH_CHARS) throw invalid(`path is longer than ${MAX_PATH_CHARS} characters`);
  let text = given;
  if (/^file:/i.test(text)) text = fromUri(text);
  checkText(text, "path");
  // A name with % escapes is taken literally, but one that decodes to something unsafe is refused:
  // the server may mean the decoded form, and guessing is how escapes get through.
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {}
  if (decoded !== text) checkText(decoded, "path (percent-decoded)");
  if (roots.length === 0) throw new AfsError("PERMISSION_DENIED", "the broker serves no roots");
  if (text.startsWith("/")) return fromHost(roots, normalizePath(text));
  if (roots.length === 1) return { root: roots[0] as BrokerRoot, path: normalizePath(text) };
  const [first, ...rest] = segments(normalizePath(text));
  const root = roots.find((r) => r.name === first);
  if (!root) {
    throw invalid(
      `with several roots a path starts with a root's name (${roots.map((r) => r.name).join(", ")}); ${JSON.stringify(first ?? "")} is none of them`,
    );
  }
  return { root, path: normalizePath(rest.join("/")) };
}

function fromHost(roots: readonly BrokerRoot[], host: string): Target {
  for (const root of roots) {
    for (const base of [root.dir, root.real]) {
      if (base === null) continue;
      if (host === base) return { root, path: ROOT };
      if (host.startsWith(base === ROOT ? ROOT : `${base}/`))
        return { root, path: normalizePath(host.slice(base.length)) };
    }
  }
  throw new AfsError(
    "PERMISSION_DENIED",
    `that absolute path is outside every root (${roots.map((r) => r.name).join(", ")}); only paths inside them can be used`,
  );
}

/** The consent key: "ROOT" or "ROOT/sub/path". */
export const keyOf = (t: Target): string => (t.path === ROOT ? t.root.name : `${t.root.name}${t.path}`);

/** The path as the server spells it: relative to the only root, or under the root's name when there are several. */
export function displayOf(roots: readonly BrokerRoot[], t: Target): string {
  if (roots.length === 1) return t.path === ROOT ? "." : t.path.slice(1);
  return keyOf(t);
}

/**
 * A path as a person or a policy file writes it (host path, URI, "ROOT/sub", or relative to a
 * single root) as a consent key; null when it is outside every root or unsafe.
 */
export function canonicalKey(roots: readonly BrokerRoot[], given: string): string | null {
  try {
    if (given.startsWith("/") || /^file:/i.test(given)) return keyOf(resolvePath(roots, given));
    checkText(given, "path");
    const [first, ...rest] = segments(normalizePath(given));
    const root = roots.find((r) => r.name === first);
    if (root) return keyOf({ root, path: normalizePath(rest.join("/")) });
    return roots.length === 1 ? keyOf(resolvePath(roots, given)) : null;
  } catch {
    return null;
  }
}

/**
 * Where `t` really lands with symlinks followed (`entry`: the entry itself, only its parent
 * followed, for delete and rename). PERMISSION_DENIED when that is outside the root; never a fallback.
 */
export async function landing(t: Target, entry = false): Promise<Target> {
  // A directory: its volume's confinement says where the path lands.
  const volume = t.root.volume;
  if (volume.realPath) return { root: t.root, path: await volume.realPath(t.path, { entry }) };
  if (entry) {
    if (t.path === ROOT) return t;
    const parent = await landing({ root: t.root, path: parentOf(t.path) });
    return { root: t.root, path: joinPath(parent.path, segments(t.path).at(-1) as string) };
  }
  // A workspace: follow symlink entries component by component; a target cannot climb above "/".
  let hops = 0;
  let done = ROOT;
  let todo = segments(t.path);
  while (todo.length > 0) {
    const next = joinPath(done, todo[0] as string);
    const st = await t.root.volume.stat(next);
    if (st?.kind === "symlink" && st.target !== undefined) {
      if (++hops > MAX_HOPS) throw invalid(`too many levels of symbolic links at ${t.path}`);
      const target = st.target.startsWith("/") ? st.target : `${done}/${st.target}`;
      let resolved: string;
      try {
        resolved = normalizePath(target);
      } catch {
        throw new AfsError("PERMISSION_DENIED", `${t.path} resolves outside the root (through a symbolic link)`, {
          path: t.path,
        });
      }
      done = ROOT;
      todo = [...segments(resolved), ...todo.slice(1)];
      continue;
    }
    done = next;
    todo = todo.slice(1);
  }
  return { root: t.root, path: done };
}
